import { and, desc, eq, gte, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { credentials } from '../../core/auth/tables.ts';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, orgForUser, orgsErrors, requireRole, slugInput } from '../orgs/index.ts';
import { forgetLimits } from './budgets.ts';
import { monthSpend, monthStart } from './month-spend.ts';
import { modelLimits, modelUsage } from './tables.ts';

// Budgets (USD per calendar month, UTC) per organization and per API key, and per-key model allow-lists.
// Enforced by the proxy (budgets.ts); docs/models.md, "Spend, budgets and allow-lists".

const keyIdInput = z.string().min(1).max(64);
const budgetInput = z
  .number()
  .min(0, 'a budget is 0 or more USD')
  .max(10_000_000)
  .nullable()
  .describe('USD per calendar month (UTC); 0 blocks every call; null removes the budget');
const patternInput = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:/@*-]+$/, 'a model name or glob: letters, digits, . _ : / @ - and *');

/** The organization's live (not revoked) API key with this id, or API_KEY_NOT_FOUND (another org's too). */
async function orgKey(deps: Deps, orgId: string, keyId: string) {
  const [row] = await deps.db.orm
    .select({ keyId: credentials.keyId, label: credentials.label })
    .from(credentials)
    .where(
      and(
        eq(credentials.keyId, keyId),
        eq(credentials.orgId, orgId),
        inArray(credentials.kind, ['sk_live', 'sk_test']),
        isNull(credentials.revokedAt),
      ),
    );
  if (!row) throw orgsErrors.apiKeyNotFound(keyId);
  return row;
}

async function upsertLimit(
  deps: Deps,
  orgId: string,
  keyId: string,
  set: { monthlyBudgetUsd?: number | null; allowedModels?: string[] | null },
) {
  const now = deps.clock.now();
  const [row] = await deps.db.orm
    .insert(modelLimits)
    .values({ orgId, keyId, ...set, updatedAt: now })
    .onConflictDoUpdate({ target: [modelLimits.orgId, modelLimits.keyId], set: { ...set, updatedAt: now } })
    .returning();
  forgetLimits(deps, orgId);
  return row!;
}

const keyLimits = z.object({
  keyId: z.string(),
  label: z.string(),
  monthlyBudgetUsd: z.number().nullable(),
  allowedModels: z.array(z.string()).nullable().describe('null: any model'),
  spentUsd: z.number().describe('USD this month through this key'),
});

export const getModelLimitsForCli = defineFn({
  name: 'getModelLimitsForCli',
  summary:
    "The organization's model budget, each API key's budget and model allow-list, and this month's spend (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput }),
  output: z.object({
    period: z.literal('month').describe('Budgets are per calendar month, UTC'),
    periodStart: z.string(),
    organization: z.object({ monthlyBudgetUsd: z.number().nullable(), spentUsd: z.number() }),
    keys: z.array(keyLimits),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug }) => {
    const { org } = await orgForUser(deps, caller.userId, orgSlug);
    const periodStart = monthStart(deps.clock.now());
    const [keys, limits, spend] = await Promise.all([
      deps.db.orm
        .select({ keyId: credentials.keyId, label: credentials.label })
        .from(credentials)
        .where(
          and(
            eq(credentials.orgId, org.id),
            inArray(credentials.kind, ['sk_live', 'sk_test']),
            isNull(credentials.revokedAt),
          ),
        )
        .orderBy(desc(credentials.createdAt)),
      deps.db.orm.select().from(modelLimits).where(eq(modelLimits.orgId, org.id)),
      spendByKey(deps, org.id, periodStart),
    ]);
    const limitOf = (keyId: string) => limits.find((l) => l.keyId === keyId);
    return {
      period: 'month' as const,
      periodStart,
      organization: {
        monthlyBudgetUsd: limitOf('')?.monthlyBudgetUsd ?? null,
        spentUsd: [...spend.values()].reduce((a, b) => a + b, 0),
      },
      keys: keys.map((k) => ({
        ...k,
        monthlyBudgetUsd: limitOf(k.keyId)?.monthlyBudgetUsd ?? null,
        allowedModels: limitOf(k.keyId)?.allowedModels ?? null,
        spentUsd: spend.get(k.keyId) ?? 0,
      })),
    };
  },
});

async function spendByKey(deps: Deps, orgId: string, since: string): Promise<Map<string, number>> {
  const rows = await deps.db.orm
    .select({ keyId: modelUsage.keyId, costUsd: modelUsage.costUsd })
    .from(modelUsage)
    .where(and(eq(modelUsage.orgId, orgId), gte(modelUsage.day, since)));
  const out = new Map<string, number>();
  for (const r of rows) out.set(r.keyId, (out.get(r.keyId) ?? 0) + (r.costUsd ?? 0));
  return out;
}

export const setModelBudgetForCli = defineFn({
  name: 'setModelBudgetForCli',
  minRole: 'manager',
  summary:
    'Sets the monthly model budget (USD) of the organization, or of one API key with keyId (owner or admin); null removes it.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, keyId: keyIdInput.optional(), monthlyUsd: budgetInput }),
  output: z.object({
    keyId: z.string().nullable().describe('null: the organization'),
    monthlyBudgetUsd: z.number().nullable(),
    spentUsd: z.number().describe('USD spent this month (UTC) by the organization or the key'),
  }),
  errors: ['ORG_NOT_FOUND', 'API_KEY_NOT_FOUND', 'FORBIDDEN'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    if (input.keyId !== undefined) await orgKey(deps, org.id, input.keyId);
    const row = await upsertLimit(deps, org.id, input.keyId ?? '', { monthlyBudgetUsd: input.monthlyUsd });
    await audit(deps, { kind: 'user', id: caller.userId }, 'model-budget.set', org.id, {
      keyId: input.keyId ?? null,
      monthlyUsd: input.monthlyUsd,
    });
    const spent = await monthSpend(deps, org.id, input.keyId ?? '');
    return {
      keyId: input.keyId ?? null,
      monthlyBudgetUsd: row.monthlyBudgetUsd,
      spentUsd: input.keyId === undefined ? spent.org : spent.key,
    };
  },
});

export const setModelAllowListForCli = defineFn({
  name: 'setModelAllowListForCli',
  minRole: 'manager',
  summary:
    "Sets the models an API key may call through the proxy (names or globs with *, e.g. 'gpt-4o-mini', 'anthropic/*'); null allows any (owner or admin).",
  auth: { kind: 'user' },
  input: z.strictObject({
    orgSlug: slugInput,
    keyId: keyIdInput,
    models: z.array(patternInput).max(100).nullable(),
  }),
  output: z.object({ keyId: z.string(), allowedModels: z.array(z.string()).nullable() }),
  errors: ['ORG_NOT_FOUND', 'API_KEY_NOT_FOUND', 'FORBIDDEN'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    await orgKey(deps, org.id, input.keyId);
    const models = input.models === null ? null : [...new Set(input.models)];
    const row = await upsertLimit(deps, org.id, input.keyId, { allowedModels: models });
    await audit(deps, { kind: 'user', id: caller.userId }, 'model-allow-list.set', org.id, {
      keyId: input.keyId,
      models,
    });
    return { keyId: input.keyId, allowedModels: row.allowedModels };
  },
});
