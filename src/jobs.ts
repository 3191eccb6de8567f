import { integrationsRefreshJob } from './areas/integrations/jobs.ts';
import { sweepBlobTempJob } from './core/blobs/sweep-temp-job.ts';
import { dbMaintenanceJob } from './core/db/maintenance-job.ts';
import type { JobDef, JobPayloadsOf } from './core/jobs.ts';
import { webhookDeliverJob } from './core/webhooks.ts';
import { reembedJob } from './platform/reembed.ts';
import { deployJob } from './platform/runtime/deploy-job.ts';
import { pruneIdempotencyJob } from './v1/idempotency.ts';
import { mailSweepJob } from './v1/mail/sweeper.ts';
import { mailDeliverJob } from './v1/mail/worker.ts';
import { memoryCompactJob, memoryEmbedJob, memoryTiersJob } from './v1/memory/worker.ts';

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
  integrationsRefreshJob, // areas-layout: move to src/areas/index.ts
] as const satisfies readonly JobDef[];

export type JobRegistry = JobPayloadsOf<typeof jobDefs>;
