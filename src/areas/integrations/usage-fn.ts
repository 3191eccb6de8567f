import { utcDay } from '../../core/usage-days.ts';
import { usageDaysFn } from '../orgs/index.ts';

// Integrations over time for the dashboard's chart: connections created per UTC day (both environments),
// split by whether they are connected now. Unified and passthrough calls are not recorded per call (a
// connection keeps only its last use), so they cannot be charted by day.

export const getIntegrationUsageByDayForCli = usageDaysFn({
  name: 'getIntegrationUsageByDayForCli',
  summary:
    "The organization's integration connections created per UTC day over the last `days` (default 30).",
  counters: ['connected', 'other'],
  sql: `select ${utcDay('created_at')} as day,
               count(*) filter (where status = 'connected') as connected,
               count(*) filter (where status <> 'connected') as other
          from integration_connections where org_id = $1 and created_at >= $2 group by 1`,
});
