import { utcDay } from '../../core/usage-days.ts';
import { usageDaysFn } from '../orgs/index.ts';
import { assertVector } from './context.ts';

// Memory over time for the dashboard's chart: memories stored per UTC day (both environments), and changes
// to stored memories (updates, archiving, compaction) on the day they happened, from memory_history.
// Recalls are not counted: recall keeps only a running count and the last access per memory
// (memory_access, decision 092), not when each recall happened.

export const getMemoryUsageByDayForCli = usageDaysFn({
  name: 'getMemoryUsageByDayForCli',
  summary: "The organization's memories stored and changed per UTC day over the last `days` (default 30).",
  counters: ['stored', 'changed'],
  sql: `select day, sum(stored) as stored, sum(changed) as changed from (
          select ${utcDay('created_at')} as day, count(*) as stored, 0 as changed
            from memories where org_id = $1 and created_at >= $2 group by 1
          union all
          select ${utcDay('valid_to')} as day, 0, count(*)
            from memory_history where org_id = $1 and valid_to >= $2 group by 1
        ) u group by day`,
  errors: ['VECTOR_EXTENSION_MISSING'],
  before: assertVector,
});
