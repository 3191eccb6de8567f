import { z } from 'zod';
import { defineJob } from '../../../core/jobs.ts';
import type { Deps } from '../../../deps.ts';
import { runScreenshot, SCREENSHOT_JOB } from './screenshots.ts';

/** One screenshot; page failures are written to the row, so the job itself never retries. */
export const screenshotJob = defineJob({
  name: SCREENSHOT_JOB,
  schema: z.object({ screenshotId: z.string().uuid() }),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 2,
  expireInSeconds: 600,
  handle: async (data, { deps, signal }: { deps: Deps; signal?: AbortSignal }) => {
    await runScreenshot(deps, data.screenshotId, signal);
  },
});
