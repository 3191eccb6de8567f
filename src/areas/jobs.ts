import { sweepBlobTempJob } from '../core/blobs/sweep-temp-job.ts';
import { dbMaintenanceJob } from '../core/db/maintenance-job.ts';
import type { JobDef, JobPayloadsOf } from '../core/jobs.ts';
import { webhookDeliverJob } from '../core/webhooks.ts';
import { pruneIdempotencyJob } from '../http/idempotency.ts';
import { deployJob } from './hosting/runtime/deploy-job.ts';
import { mailSweepJob } from './mail/sweeper.ts';
import { mailDeliverJob } from './mail/worker.ts';
import { memoryCompactJob, memoryEmbedJob, memoryTiersJob } from './memory/worker.ts';
import { reembedJob } from './models/reembed.ts';

// The typed registry of every background job: areas add their defineJob()s to this list, and
// `deps.jobs.enqueue(name, payload)` only compiles for a listed name with a payload its schema accepts.
export const jobDefs = [
  sweepBlobTempJob,
  dbMaintenanceJob,
  webhookDeliverJob,
  reembedJob,
  memoryCompactJob,
  memoryEmbedJob,
  memoryTiersJob,
  mailDeliverJob,
  mailSweepJob,
  pruneIdempotencyJob,
  deployJob,
] as const satisfies readonly JobDef[];

export type JobRegistry = JobPayloadsOf<typeof jobDefs>;
