import { and, eq, inArray } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { apiKeyCaller, operationDoc } from '../../http/v1-kit.ts';
import { monthSpend, monthStart } from './month-spend.ts';
import type { ProxyContext } from './proxy-context.ts';
import { modelLimits } from './tables.ts';

// GET /v1/ai/key: what the calling API key may still spend and call, as OpenRouter's GET /api/v1/key tells a
// key its usage and limit — so an app can check before it is refused with 402 or 403.

const budget = z.object({
  monthlyBudgetUsd: z.number().nullable().describe('USD per calendar month (UTC); null: none'),
  spentUsd: z.number().describe('USD spent this month (priced models only)'),
});

export const keySpendSchema = z
  .object({
    keyId: z.string(),
    period: z.literal('month'),
    periodStart: z.string().describe('The first day of the budget period (UTC)'),
    key: budget.extend({
      allowedModels: z.array(z.string()).nullable().describe('Model names or globs; null: any model'),
    }),
    organization: budget,
  })
  .describe("The API key's and its organization's budgets and spend this month");

export async function keySpendRoute(app: FastifyInstance, ctx: ProxyContext): Promise<void> {
  const { deps } = ctx;
  const { errorResponses, ...doc } = operationDoc('ai', {
    name: 'ai.getKey',
    summary:
      "The calling API key's model budget, spend this month and allowed models, and its organization's.",
    errors: [],
  });
  app.get(
    '/key',
    { schema: { ...doc, response: { 200: keySpendSchema, ...errorResponses } } },
    async (req) => {
      const { orgId, keyId } = apiKeyCaller(req);
      const [limits, spent] = await Promise.all([
        deps.db.orm
          .select()
          .from(modelLimits)
          .where(and(eq(modelLimits.orgId, orgId), inArray(modelLimits.keyId, ['', keyId]))),
        monthSpend(deps, orgId, keyId),
      ]);
      // What this node has not written yet counts too, as in the budget check.
      const buffered = ctx.usage.pendingCost(orgId, keyId, monthStart(deps.clock.now()));
      const own = limits.find((l) => l.keyId === keyId);
      const org = limits.find((l) => l.keyId === '');
      return {
        keyId,
        period: 'month' as const,
        periodStart: monthStart(deps.clock.now()),
        key: {
          monthlyBudgetUsd: own?.monthlyBudgetUsd ?? null,
          spentUsd: spent.key + buffered.key,
          allowedModels: own?.allowedModels ?? null,
        },
        organization: { monthlyBudgetUsd: org?.monthlyBudgetUsd ?? null, spentUsd: spent.org + buffered.org },
      };
    },
  );
}
