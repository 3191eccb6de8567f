import { z } from 'zod';
import type { Db } from '../db/client.ts';
import { defineJob } from '../jobs.ts';

// The shared buckets gain a row per key ever seen, and the function API's are keyed by client address and
// by credential (sessions come and go): without pruning the table only grows. A row untouched for a day is
// a full bucket under any sensible rule (burst / perSec well under a day), and a missing row is taken as a
// full bucket, so deleting it changes no decision. Scheduled hourly by the worker role (background.ts).

export const PRUNE_BUCKETS_CRON = '41 * * * *';
const IDLE_MS = 24 * 60 * 60_000;

export async function pruneRateBuckets(db: Db, nowMs: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'WITH d AS (DELETE FROM v1_rate_buckets WHERE updated_ms < $1::bigint RETURNING 1) SELECT count(*)::int AS n FROM d',
    [nowMs - IDLE_MS],
  );
  return Number(rows[0]?.n ?? 0);
}

export const pruneRateBucketsJob = defineJob({
  name: 'rate-buckets.prune',
  cronOnly: true,
  schema: z.object({}),
  handle: async (_data, { deps }: { deps: { db: Db; clock: { nowMs(): number } } }) => {
    await pruneRateBuckets(deps.db, deps.clock.nowMs());
  },
});
