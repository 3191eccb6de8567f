import { and, asc, eq, lte } from 'drizzle-orm';
import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import type { IntegrationDeps } from './connection-tokens.ts';
import { runSync } from './sync-run.ts';
import { integrationSyncs as syncs } from './sync-tables.ts';
import { SYNC_JOB } from './syncs.ts';

// Syncs through the Postgres job queue: every minute the syncs due become one `integrations.sync` job each
// (a sync already queued is not queued twice), and any worker runs it; one run at a time per sync through
// the sync's lease (sync-run.ts).

export const SYNCS_DUE_JOB = 'integrations.syncs-due';
export const SYNCS_DUE_CRON = '* * * * *';

/** Queues a run of every sync due; answers how many were queued. */
export async function queueDueSyncs(d: IntegrationDeps, limit = 200): Promise<number> {
  const now = d.clock.now();
  const due = await d.db.orm
    .select({ id: syncs.id, frequencyMinutes: syncs.frequencyMinutes, nextRunAt: syncs.nextRunAt })
    .from(syncs)
    .where(and(eq(syncs.paused, false), lte(syncs.nextRunAt, now)))
    .orderBy(asc(syncs.nextRunAt))
    .limit(limit);
  let queued = 0;
  for (const s of due) {
    // Moved on first, so the next tick does not queue it again while it waits or runs; the run sets the
    // time again from when it finishes. Two schedulers at once: only the one whose update matched queues.
    const [mine] = await d.db.orm
      .update(syncs)
      .set({ nextRunAt: new Date(now.getTime() + s.frequencyMinutes * 60_000) })
      .where(and(eq(syncs.id, s.id), eq(syncs.nextRunAt, s.nextRunAt)))
      .returning({ id: syncs.id });
    if (!mine) continue;
    await d.jobs.enqueue(SYNC_JOB, { syncId: s.id }, { singletonKey: `sync:${s.id}` });
    queued++;
  }
  return queued;
}

export const integrationsSyncsDueJob = defineJob({
  name: SYNCS_DUE_JOB,
  schema: z.object({}),
  handle: async (_data, { deps }: { deps: Deps }) => {
    await queueDueSyncs(deps);
  },
});

export const integrationsSyncJob = defineJob({
  name: SYNC_JOB,
  schema: z.object({ syncId: z.string().uuid() }),
  handle: async (data, { deps }: { deps: Deps }) => {
    await runSync(deps, data.syncId);
  },
});
