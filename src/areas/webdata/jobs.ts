import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { BATCH_JOB, runBatch } from './batches.ts';
import { CRAWL_JOB, runCrawl } from './crawl.ts';
import { EXTRACT_JOB, runExtraction } from './extractions.ts';
import {
  runQueuedRun,
  SCHEDULE_RUN_JOB,
  SCHEDULE_TICK_CRON,
  SCHEDULE_TICK_JOB,
  tickSchedules,
} from './schedules.ts';
import { sweepInterrupted } from './sweep.ts';

// Web data's background work. Page failures are stored on the resource's row (status `failed`, a human
// `error`), so none of these jobs retries: a retry would fetch a failing site again for nothing.

type Ctx = { deps: Deps; signal?: AbortSignal };

export const extractJob = defineJob({
  name: EXTRACT_JOB,
  schema: z.object({ extractionId: z.string().uuid() }),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 4,
  expireInSeconds: 120,
  handle: async (data, { deps, signal }: Ctx) => {
    await runExtraction(deps, data.extractionId, signal);
  },
});

export const batchJob = defineJob({
  name: BATCH_JOB,
  schema: z.object({ batchId: z.string().uuid() }),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 2,
  expireInSeconds: 4 * 3600,
  handle: async (data, { deps, signal }: Ctx) => {
    await runBatch(deps, data.batchId, signal);
  },
});

export const crawlJob = defineJob({
  name: CRAWL_JOB,
  schema: z.object({ crawlId: z.string().uuid() }),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 2,
  expireInSeconds: 4 * 3600,
  handle: async (data, { deps, signal }: Ctx) => {
    await runCrawl(deps, data.crawlId, signal);
  },
});

export const scheduleTickJob = defineJob({
  name: SCHEDULE_TICK_JOB,
  cronOnly: true,
  schema: z.object({}),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 1,
  expireInSeconds: 3600,
  handle: async (_data, { deps, signal }: Ctx) => {
    // The minute tick also sweeps: work of a worker that died while others kept running is picked up here.
    await sweepInterrupted(deps);
    await tickSchedules(deps, { signal });
  },
});

export const scheduleRunJob = defineJob({
  name: SCHEDULE_RUN_JOB,
  schema: z.object({ runId: z.string().uuid() }),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 2,
  expireInSeconds: 3600,
  handle: async (data, { deps, signal }: Ctx) => {
    await runQueuedRun(deps, data.runId, signal);
  },
});

export { SCHEDULE_TICK_CRON, SCHEDULE_TICK_JOB };
