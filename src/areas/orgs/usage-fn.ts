import { z } from 'zod';
import { apiUsage } from '../../core/api-usage.ts';
import { countsByDay, lastDays, usageDaysInput } from '../../core/usage-days.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser } from './access.ts';
import { slugInput } from './schema.ts';

// The organization's v1 API requests and errors per UTC day (usage_api_daily, src/core/api-usage.ts) for
// the dashboard's overview chart. This node's counts of the last seconds are added first.

export const getApiUsageByDayForCli = defineFn({
  name: 'getApiUsageByDayForCli',
  summary:
    "The organization's v1 API requests and errors (4xx/5xx answers) per UTC day over the last `days`.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, days: usageDaysInput }),
  output: z.object({
    days: z.array(z.object({ day: z.string(), requests: z.number().int(), errors: z.number().int() })),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    await apiUsage(deps.db).flush();
    const days = await countsByDay(
      deps.db,
      `select to_char(day, 'YYYY-MM-DD') as day, requests, errors
         from usage_api_daily where org_id = $1 and day >= ($2::timestamptz at time zone 'UTC')::date`,
      org.id,
      lastDays(deps.clock.now(), input.days),
      ['requests', 'errors'] as const,
    );
    return { days };
  },
});
