import { z } from 'zod';
import { utcDay } from '../../core/usage-days.ts';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput, usageDaysFn } from '../orgs/index.ts';
import { DEFAULT_PRICES } from './prices.ts';

// The organization's workflow credits, per environment and in total, for the CLI, the dashboard and
// scripts (POST /api/fn/getWorkflowUsageForCli), with the price table in force.

const envUsage = z.object({ runs: z.number().int(), creditsUsed: z.number() });

export async function workflowUsage(deps: Deps, orgId: string, since?: Date) {
  const { rows } = await deps.db.query<{
    environment: string;
    runs: string | number;
    credits: string | number;
  }>(
    `select environment, count(*) as runs, coalesce(sum(credits_used), 0) as credits
       from workflow_runs where org_id = $1 and ($2::timestamptz is null or created_at >= $2)
      group by environment`,
    [orgId, since?.toISOString() ?? null],
  );
  const of = (env: string) => {
    const r = rows.find((x) => x.environment === env);
    return { runs: Number(r?.runs ?? 0), creditsUsed: Number(r?.credits ?? 0) };
  };
  const production = of('production');
  const sandbox = of('sandbox');
  return {
    production,
    sandbox,
    creditsUsed: Math.round((production.creditsUsed + sandbox.creditsUsed) * 10_000) / 10_000,
    prices: { ...DEFAULT_PRICES, ...deps.config.workflows.prices },
  };
}

export const getWorkflowUsageForCli = defineFn({
  name: 'getWorkflowUsageForCli',
  summary: "The organization's workflow runs and credits used, per environment, and the price table.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, since: z.iso.datetime().optional() }),
  output: z.object({
    production: envUsage,
    sandbox: envUsage,
    creditsUsed: z.number(),
    prices: z.record(z.string(), z.number()),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug, since }) => {
    const { org } = await orgForUser(deps, caller.userId, orgSlug);
    return workflowUsage(deps, org.id, since ? new Date(since) : undefined);
  },
});

export const getWorkflowUsageByDayForCli = usageDaysFn({
  name: 'getWorkflowUsageByDayForCli',
  summary: "The organization's workflow runs and credits per UTC day over the last `days` (default 30).",
  counters: ['runs', 'failed', 'credits'],
  fractional: ['credits'],
  sql: `select ${utcDay('created_at')} as day, count(*) as runs,
               count(*) filter (where status = 'failed') as failed,
               coalesce(sum(credits_used), 0) as credits
          from workflow_runs where org_id = $1 and created_at >= $2 group by 1`,
});
