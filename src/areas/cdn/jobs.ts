import { and, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { uploadKeyOf } from './assets.ts';
import { MERGE_JOB } from './merge.ts';
import { runMerge } from './merge-run.ts';
import { cdnAssets } from './tables.ts';
import { expireTransformCache } from './transform.ts';
import { VIDEO_JOB } from './video-jobs.ts';
import { runVideoJob } from './video-run.ts';

// The CDN's housekeeping, hourly on the worker role: transformed variants older than the contract's 90 days
// are removed (rows and bytes), and uploads never confirmed are discarded a day after their URL expired.

export const CDN_CLEANUP_JOB = 'cdn.cleanup';
export const CDN_CLEANUP_CRON = '41 * * * *';
const ABANDONED_AFTER_MS = 24 * 3600_000;

export async function discardAbandonedUploads(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - ABANDONED_AFTER_MS);
  const gone = await deps.db.orm
    .delete(cdnAssets)
    .where(and(eq(cdnAssets.status, 'pending'), lt(cdnAssets.uploadExpiresAt, cutoff)))
    .returning({ blobKey: cdnAssets.blobKey, chunks: cdnAssets.uploadChunks });
  await Promise.allSettled(
    gone.flatMap((g) =>
      [g.blobKey, uploadKeyOf(g.blobKey), ...(g.chunks ?? []).map((c) => c.key)].map((k) =>
        deps.blobs.delete(k),
      ),
    ),
  );
  return gone.length;
}

export const cdnCleanupJob = defineJob({
  name: CDN_CLEANUP_JOB,
  cronOnly: true,
  schema: z.object({}),
  retry: { limit: 2, delaySec: 60 },
  handle: async (_data, { deps }: { deps: Deps }) => {
    await expireTransformCache(deps);
    await discardAbandonedUploads(deps);
  },
});

/** One video merge; ffmpeg failures are written to the row, so the job itself never retries. */
export const cdnMergeJob = defineJob({
  name: MERGE_JOB,
  schema: z.object({ mergeId: z.string().uuid() }),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 1,
  expireInSeconds: 4 * 3600,
  handle: async (data, { deps, signal }: { deps: Deps; signal?: AbortSignal }) => {
    await runMerge(deps, data.mergeId, signal);
  },
});

/** One poster, thumbnail, preview or HLS rendition; failures are written to the row, never retried. */
export const cdnVideoJob = defineJob({
  name: VIDEO_JOB,
  schema: z.object({ jobId: z.string().uuid() }),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 1,
  expireInSeconds: 4 * 3600,
  handle: async (data, { deps }: { deps: Deps }) => {
    await runVideoJob(deps, data.jobId);
  },
});
