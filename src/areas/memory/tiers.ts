import type { Db } from '../../core/db/client.ts';
import { lastAccessedSql } from './memory-view.ts';

// Tiers move by use, on a schedule (memory.tiers, every 15 minutes):
// - promote to hot: a warm or cold memory recalled at least `promoteAt` times recently
//   (recent = accesses since the previous runs, halved at each run, so old popularity fades);
// - demote hot → warm: not recalled for `hotIdleDays`; warm → cold: not recalled for `warmIdleDays`
//   (never recalled counts from creation).
// `archived` is never set or left here: only compaction or the user does that.

const LAST_ACCESSED = lastAccessedSql('memories');

export const TIER_RULES = { promoteAt: 3, hotIdleDays: 7, warmIdleDays: 30 } as const;

export type TierRunResult = { promoted: number; demotedToWarm: number; demotedToCold: number };

export async function runTierMaintenance(db: Db, now: Date): Promise<TierRunResult> {
  const day = 86_400_000;
  const hotCutoff = new Date(now.getTime() - TIER_RULES.hotIdleDays * day).toISOString();
  const warmCutoff = new Date(now.getTime() - TIER_RULES.warmIdleDays * day).toISOString();
  const promoted = await db.query<{ id: string }>(
    `UPDATE memories SET tier = 'hot'
      WHERE tier IN ('warm', 'cold')
        AND id IN (SELECT memory_id FROM memory_access WHERE recent_access_count >= $1) RETURNING id`,
    [TIER_RULES.promoteAt],
  );
  const toWarm = await db.query<{ id: string }>(
    `UPDATE memories SET tier = 'warm'
      WHERE tier = 'hot' AND coalesce(${LAST_ACCESSED}, created_at) < $1 RETURNING id`,
    [hotCutoff],
  );
  const toCold = await db.query<{ id: string }>(
    `UPDATE memories SET tier = 'cold'
      WHERE tier = 'warm' AND coalesce(${LAST_ACCESSED}, created_at) < $1 RETURNING id`,
    [warmCutoff],
  );
  await db.query(
    'UPDATE memory_access SET recent_access_count = recent_access_count / 2 WHERE recent_access_count > 0',
  );
  return {
    promoted: promoted.rows.length,
    demotedToWarm: toWarm.rows.length,
    demotedToCold: toCold.rows.length,
  };
}
