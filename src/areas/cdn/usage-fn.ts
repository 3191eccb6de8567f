import { utcDay } from '../../core/usage-days.ts';
import { usageDaysFn } from '../orgs/index.ts';
import { ASSET_TYPES } from './tables.ts';

// Storage by type over time for the dashboard's chart: bytes of assets stored per UTC day (both
// environments), split by asset type, counted on the day the asset was created. As storageUsage
// (usage.ts), pending uploads are not counted (their bytes are unverified); deleted assets have no row and
// drop out of the days they were stored on.

const sumFor = (type: string) => `coalesce(sum(size) filter (where type = '${type}'), 0) as "${type}"`;

export const getCdnUsageByDayForCli = usageDaysFn({
  name: 'getCdnUsageByDayForCli',
  summary: "The organization's asset bytes stored per UTC day by type over the last `days` (default 30).",
  counters: ASSET_TYPES,
  sql: `select ${utcDay('created_at')} as day, ${ASSET_TYPES.map(sumFor).join(', ')}
          from cdn_assets where org_id = $1 and created_at >= $2 and status <> 'pending' group by 1`,
});
