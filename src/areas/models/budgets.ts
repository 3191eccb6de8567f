import { and, eq, inArray } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { modelsErrors } from './errors.ts';
import type { UsageBuffer } from './model-usage.ts';
import { monthStart } from './month-spend.ts';
import type { PriceList } from './prices.ts';
import { modelLimits } from './tables.ts';

// The proxy's pre-call check (docs/models.md, "Spend, budgets and allow-lists"): a key's model allow-list,
// then the key's and the organization's monthly budgets, before any provider is called.

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

const LIMITS_TTL_MS = 5_000;
type LimitRow = typeof modelLimits.$inferSelect;
// Each process keeps the (organization, key) limits it read for LIMITS_TTL_MS, so a call without limits
// costs no query; a change made on this node drops them at once, on other nodes within the TTL. Kept per
// Deps (one per app) so that test apps sharing a process do not share it.
const limitsCaches = new WeakMap<Deps, Map<string, { at: number; rows: Promise<LimitRow[]> }>>();

function limitsOf(deps: Deps, orgId: string, keyId: string): Promise<LimitRow[]> {
  let cache = limitsCaches.get(deps);
  if (!cache) {
    cache = new Map();
    limitsCaches.set(deps, cache);
  }
  const k = `${orgId}|${keyId}`;
  const now = Date.now();
  const hit = cache.get(k);
  if (hit && now - hit.at < LIMITS_TTL_MS) return hit.rows;
  if (cache.size > 10_000) cache.clear();
  const rows = deps.db.orm
    .select()
    .from(modelLimits)
    .where(and(eq(modelLimits.orgId, orgId), inArray(modelLimits.keyId, ['', keyId])))
    // A drizzle query runs each time it is awaited: then() runs it once and keeps the answer.
    .then((r) => r);
  cache.set(k, { at: now, rows });
  rows.catch(() => cache.delete(k));
  return rows;
}

/** Drops this node's cached limits of an organization (after a budget or an allow-list changed). */
export function forgetLimits(deps: Deps, orgId: string): void {
  const cache = limitsCaches.get(deps);
  if (!cache) return;
  for (const k of cache.keys()) if (k.startsWith(`${orgId}|`)) cache.delete(k);
}

/** The key's allowed model patterns, or null when it may call any model. */
export async function allowedModelsOf(deps: Deps, orgId: string, keyId: string): Promise<string[] | null> {
  const limits = await limitsOf(deps, orgId, keyId);
  return limits.find((l) => l.keyId === keyId && keyId !== '')?.allowedModels ?? null;
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

/** Characters of text in chat messages (string contents and text parts; images and tool calls not counted). */
export function textChars(messages: readonly { content?: unknown }[]): number {
  let n = 0;
  for (const m of messages) {
    if (typeof m.content === 'string') n += m.content.length;
    else if (Array.isArray(m.content))
      for (const p of m.content) if (p && typeof p.text === 'string') n += p.text.length;
  }
  return n;
}

/** What a call may cost before it is made: its text, and max_tokens when given (for the budget estimate). */
export type CallSize = { inputChars: number; maxOutputTokens?: number };

/** The size of a text request as the proxy builds it (system text, messages, max output tokens). */
export function sizeOf(r: {
  system?: string;
  messages?: readonly { content?: unknown }[];
  maxOutputTokens?: number;
}): CallSize {
  return {
    inputChars: (r.system?.length ?? 0) + textChars(r.messages ?? []),
    maxOutputTokens: r.maxOutputTokens,
  };
}

/**
 * Throws MODEL_NOT_ALLOWED or BUDGET_EXCEEDED, or returns. A call is refused when the month's spend
 * (written plus still buffered on this node) has reached a budget, or — with max_tokens given — when the
 * spend plus the call's estimated worst case (input ≈ chars/4 tokens at the input price, max_tokens at the
 * output price) would pass it. Without max_tokens the last call below a budget may overshoot it.
 */
export async function checkCall(deps: Deps, usage: UsageBuffer, prices: PriceList, c: CallCheck) {
  const limits = await limitsOf(deps, c.orgId, c.keyId);
  const orgLimit = limits.find((l) => l.keyId === '');
  const keyLimit = limits.find((l) => l.keyId === c.keyId && c.keyId !== '');
  if (keyLimit?.allowedModels && !modelAllowed(keyLimit.allowedModels, c.model, c.requested))
    throw modelsErrors.modelNotAllowed(c.requested);
  const budgets = [
    { scope: 'API key' as const, budget: keyLimit?.monthlyBudgetUsd ?? null, which: 'key' as const },
    { scope: 'organization' as const, budget: orgLimit?.monthlyBudgetUsd ?? null, which: 'org' as const },
  ].filter((b) => b.budget !== null);
  if (budgets.length === 0) return;
  const stored = await usage.spend.get(c.orgId, c.keyId);
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
