import { z } from 'zod';
import { defineJob } from '../jobs.ts';
import type { BlobStore } from './blob-store.ts';

// Uploads that die half-way (client gone, process killed) leave a temp file under DATA_DIR/blobs/tmp;
// this job removes those older than the given age. Scheduled hourly by the worker role (background.ts).

export const SWEEP_TEMP_CRON = '17 * * * *';

export const sweepBlobTempJob = defineJob({
  name: 'blobs.sweep-temp',
  cronOnly: true,
  schema: z.object({
    // An hour by default: far longer than any upload that is still making progress.
    olderThanMs: z
      .number()
      .int()
      .min(60_000)
      .default(60 * 60_000),
  }),
  retry: { limit: 2, delaySec: 60 },
  handle: async (data, { deps }: { deps: { blobs: BlobStore } }) => {
    await deps.blobs.sweepTemp(data.olderThanMs);
  },
});
