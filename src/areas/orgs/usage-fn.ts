import { apiUsage } from '../../core/api-usage.ts';
import { usageDaysFn } from './usage-days-fn.ts';

// The organization's v1 API requests and errors per UTC day (usage_api_daily, src/core/api-usage.ts) for
// the dashboard's overview chart. This node's counts of the last seconds are added first.

export const getApiUsageByDayForCli = usageDaysFn({
  name: 'getApiUsageByDayForCli',
  summary:
    "The organization's v1 API requests and errors (4xx/5xx answers) per UTC day over the last `days`.",
  counters: ['requests', 'errors'],
  sql: `select to_char(day, 'YYYY-MM-DD') as day, requests, errors
          from usage_api_daily where org_id = $1 and day >= ($2::timestamptz at time zone 'UTC')::date`,
  before: (deps) => apiUsage(deps.db).flush(),
});
