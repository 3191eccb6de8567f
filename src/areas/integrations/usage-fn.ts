import { z } from 'zod';
import { countsByDay, lastDays, usageDaysInput, utcDay } from '../../core/usage-days.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';

// Integrations over time for the dashboard's chart: connections created per UTC day (both environments),
// split by whether they are connected now. Unified and passthrough calls are not recorded per call (a
// connection keeps only its last use), so they cannot be charted by day.

export const getIntegrationUsageByDayForCli = defineFn({
  name: 'getIntegrationUsageByDayForCli',
  summary:
    "The organization's integration connections created per UTC day over the last `days` (default 30).",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, days: usageDaysInput }),
  output: z.object({
    days: z.array(z.object({ day: z.string(), connected: z.number().int(), other: z.number().int() })),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    const days = await countsByDay(
      deps.db,
      `select ${utcDay('created_at')} as day,
              count(*) filter (where status = 'connected') as connected,
              count(*) filter (where status <> 'connected') as other
         from integration_connections where org_id = $1 and created_at >= $2 group by 1`,
      org.id,
      lastDays(deps.clock.now(), input.days),
      ['connected', 'other'] as const,
    );
    return { days };
  },
});
