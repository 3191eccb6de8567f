import { and, asc, eq, gte } from 'drizzle-orm';
import { z } from 'zod';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import { usageRow } from './model-usage.ts';
import { modelUsage } from './tables.ts';

export const getModelUsageForCli = defineFn({
  name: 'getModelUsageForCli',
  summary:
    "The organization's model usage and cost (USD) per day, environment, API key and model over the last `days` days.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, days: z.number().int().min(1).max(366).default(30) }),
  output: z.object({
    days: z.number(),
    rows: z.array(usageRow),
    totals: usageRow.pick({
      requests: true,
      promptTokens: true,
      completionTokens: true,
      totalTokens: true,
      costUsd: true,
    }),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug, days }) => {
    const { org } = await orgForUser(deps, caller.userId, orgSlug);
    const since = new Date(deps.clock.now().getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
    const rows = await deps.db.orm
      .select({
        day: modelUsage.day,
        environment: modelUsage.environment,
        keyId: modelUsage.keyId,
        model: modelUsage.model,
        requests: modelUsage.requests,
        promptTokens: modelUsage.promptTokens,
        completionTokens: modelUsage.completionTokens,
        totalTokens: modelUsage.totalTokens,
        costUsd: modelUsage.costUsd,
      })
      .from(modelUsage)
      .where(and(eq(modelUsage.orgId, org.id), gte(modelUsage.day, since)))
      .orderBy(
        asc(modelUsage.day),
        asc(modelUsage.environment),
        asc(modelUsage.keyId),
        asc(modelUsage.model),
      );
    const totals = { requests: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    let costUsd: number | null = null;
    for (const r of rows) {
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += r[k];
      if (r.costUsd !== null) costUsd = (costUsd ?? 0) + r.costUsd;
    }
    return { days, rows, totals: { ...totals, costUsd } };
  },
});
