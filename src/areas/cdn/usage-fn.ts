import { z } from 'zod';
import { countsByDay, lastDays, usageDaysInput, utcDay } from '../../core/usage-days.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import { ASSET_TYPES } from './tables.ts';

// Storage by type over time for the dashboard's chart: bytes of assets stored per UTC day (both
// environments), split by asset type, counted on the day the asset was created. As storageUsage
// (usage.ts), pending uploads are not counted (their bytes are unverified); deleted assets have no row and
// drop out of the days they were stored on.

const sumFor = (type: string) => `coalesce(sum(size) filter (where type = '${type}'), 0) as "${type}"`;

export const getCdnUsageByDayForCli = defineFn({
  name: 'getCdnUsageByDayForCli',
  summary: "The organization's asset bytes stored per UTC day by type over the last `days` (default 30).",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, days: usageDaysInput }),
  output: z.object({
    days: z.array(
      z.object({
        day: z.string(),
        image: z.number().int(),
        video: z.number().int(),
        audio: z.number().int(),
        document: z.number().int(),
        other: z.number().int(),
      }),
    ),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    const days = await countsByDay(
      deps.db,
      `select ${utcDay('created_at')} as day, ${ASSET_TYPES.map(sumFor).join(', ')}
         from cdn_assets where org_id = $1 and created_at >= $2 and status <> 'pending' group by 1`,
      org.id,
      lastDays(deps.clock.now(), input.days),
      ASSET_TYPES,
    );
    return { days };
  },
});
