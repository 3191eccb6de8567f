import { and, eq, gte, inArray, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { modelsErrors } from './errors.ts';
import type { UsageBuffer } from './model-usage.ts';
import type { PriceList } from './prices.ts';
import { modelLimits, modelUsage } from './tables.ts';

// The proxy's pre-call check (docs/models.md, "Spend, budgets and allow-lists"): a key's model allow-list,
// then the key's and the organization's monthly budgets, before any provider is called.

/** The first day (UTC) of the budget period, a calendar month, holding `now`. */
export const monthStart = (now: Date) => `${now.toISOString().slice(0, 7)}-01`;

/** `*` matches any run of characters (the `/` included); everything else literally. */
export function globMatch(pattern: string, name: string): boolean {
  const re = pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${re.join('.*')}$`).test(name);
}

/** A model is allowed when a pattern matches its `provider/model` id, its bare name, or the name as asked. */
export function modelAllowed(patterns: readonly string[], id: string, requested: string): boolean {
  const bare = id.slice(id.indexOf('/') + 1);
  return patterns.some((p) => globMatch(p, id) || globMatch(p, bare) || globMatch(p, requested));
}

/** USD spent this month, written to the database: the organization's and one key's. */
export async function monthSpend(
  deps: Deps,
  orgId: string,
  keyId: string,
): Promise<{ org: number; key: number }> {
  const [row] = await deps.db.orm
    .select({
      org: sql<number>`coalesce(sum(${modelUsage.costUsd}), 0)::double precision`,
      key: sql<number>`coalesce(sum(${modelUsage.costUsd}) filter (where ${modelUsage.keyId} = ${keyId}), 0)::double precision`,
    })
    .from(modelUsage)
    .where(and(eq(modelUsage.orgId, orgId), gte(modelUsage.day, monthStart(deps.clock.now()))));
  return { org: Number(row?.org ?? 0), key: Number(row?.key ?? 0) };
}

export type CallCheck = {
  orgId: string;
  keyId: string;
  /** `provider/model`, as usage records it. */
  model: string;
  /** The name the client sent. */
  requested: string;
  /** Characters of the input (≈ 4 per token), for the estimate. */
  inputChars: number;
  /** max_tokens / max_completion_tokens, when given: the call's worst case counts against the budget. */
  maxOutputTokens?: number;
};

/**
 * Throws MODEL_NOT_ALLOWED or BUDGET_EXCEEDED, or returns. A call is refused when the month's spend
 * (written plus still buffered on this node) has reached a budget, or — with max_tokens given — when the
 * spend plus the call's estimated worst case (input ≈ chars/4 tokens at the input price, max_tokens at the
 * output price) would pass it. Without max_tokens the last call below a budget may overshoot it.
 */
export async function checkCall(deps: Deps, usage: UsageBuffer, prices: PriceList, c: CallCheck) {
  const limits = await deps.db.orm
    .select()
    .from(modelLimits)
    .where(and(eq(modelLimits.orgId, c.orgId), inArray(modelLimits.keyId, ['', c.keyId])));
  const orgLimit = limits.find((l) => l.keyId === '');
  const keyLimit = limits.find((l) => l.keyId === c.keyId && c.keyId !== '');
  if (keyLimit?.allowedModels && !modelAllowed(keyLimit.allowedModels, c.model, c.requested))
    throw modelsErrors.modelNotAllowed(c.requested);
  const budgets = [
    { scope: 'API key' as const, budget: keyLimit?.monthlyBudgetUsd ?? null, which: 'key' as const },
    { scope: 'organization' as const, budget: orgLimit?.monthlyBudgetUsd ?? null, which: 'org' as const },
  ].filter((b) => b.budget !== null);
  if (budgets.length === 0) return;
  const stored = await monthSpend(deps, c.orgId, c.keyId);
  const buffered = usage.pendingCost(c.orgId, c.keyId, monthStart(deps.clock.now()));
  const estimate =
    c.maxOutputTokens === undefined
      ? 0
      : (prices.costOf(c.model, {
          promptTokens: Math.ceil(c.inputChars / 4),
          completionTokens: c.maxOutputTokens,
        }) ?? 0);
  for (const b of budgets) {
    const budget = b.budget as number;
    const spent = stored[b.which] + buffered[b.which];
    if (spent >= budget || spent + estimate > budget)
      throw modelsErrors.budgetExceeded(b.scope, budget, spent, estimate);
  }
}
