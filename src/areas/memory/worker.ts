import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { runCompaction } from './compaction.ts';
import { memoryContext } from './context.ts';
import { runTierMaintenance } from './tiers.ts';
import { embedPendingMemories } from './vector-store.ts';

// Memory's background jobs. All are no-ops on a database without pgvector (the tables do not exist).

export const TIERS_CRON = '*/15 * * * *';

export const memoryCompactJob = defineJob({
  name: 'memory.compact',
  schema: z.object({ jobId: z.uuid() }),
  retry: { limit: 2, delaySec: 5, backoff: true },
  expireInSeconds: 30 * 60,
  handle: async ({ jobId }, { deps }: { deps: Deps }) => {
    if (!deps.db.features.has('vector')) return;
    await runCompaction(memoryContext(deps), jobId);
  },
});

/** Embeds memories stored while the embedding provider was unavailable (org-embedder.ts). */
export const memoryEmbedJob = defineJob({
  name: 'memory.embed',
  schema: z.object({ orgId: z.uuid() }),
  retry: { limit: 20, delaySec: 30, backoff: true },
  handle: async ({ orgId }, { deps }: { deps: Deps }) => {
    const n = await embedPendingMemories(deps, orgId);
    deps.log.info({ orgId, memories: n }, 'pending memories embedded');
  },
});

export const memoryTiersJob = defineJob({
  name: 'memory.tiers',
  cronOnly: true,
  schema: z.object({}),
  handle: async (_data, { deps }: { deps: Deps }) => {
    if (!deps.db.features.has('vector')) return;
    const r = await runTierMaintenance(deps.db, deps.clock.now());
    deps.log.info(r, 'memory tiers updated');
  },
});
