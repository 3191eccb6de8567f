import { z } from 'zod';
import { defineJob, type JobDef } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { runCompaction } from './compaction.ts';
import { memoryContext } from './context.ts';
import { runTierMaintenance } from './tiers.ts';

// Memory's background jobs. Both are no-ops on a database without pgvector (the tables do not exist).

export type MemoryJobPayloads = {
  'memory.compact': { jobId: string };
  'memory.tiers': Record<string, never>;
};

export const TIERS_CRON = '*/15 * * * *';

export function memoryJobs(deps: Deps): JobDef[] {
  return [
    defineJob({
      name: 'memory.compact',
      schema: z.object({ jobId: z.uuid() }),
      retry: { limit: 2, delaySec: 5, backoff: true },
      expireInSeconds: 30 * 60,
      handle: async ({ jobId }) => {
        if (!deps.db.features.has('vector')) return;
        await runCompaction(memoryContext(deps), jobId);
      },
    }),
    defineJob({
      name: 'memory.tiers',
      schema: z.object({}),
      handle: async () => {
        if (!deps.db.features.has('vector')) return;
        const r = await runTierMaintenance(deps.db, deps.clock.now());
        deps.log.info(r, 'memory tiers updated');
      },
    }),
  ];
}

/** Registers the tier schedule (idempotent; pg-boss keeps one schedule per name). */
export async function scheduleMemoryJobs(deps: Deps): Promise<void> {
  if (!deps.db.features.has('vector')) return;
  try {
    await deps.jobs.schedule('memory.tiers', TIERS_CRON, {});
  } catch (err) {
    deps.log.error({ err }, 'could not schedule memory.tiers');
  }
}
