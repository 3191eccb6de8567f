import { modelCatalogue } from '../core/ai/errors.ts';
import { blobCatalogue } from '../core/blobs/errors.ts';
import { SWEEP_TEMP_CRON, sweepBlobTempJob } from '../core/blobs/sweep-temp-job.ts';
import { browserCatalogue } from '../core/browser/errors.ts';
import {
  DB_MAINTENANCE_JOB,
  dbMaintenanceJob,
  maintenanceCron,
  STARTUP_PASS_DELAY_MS,
} from '../core/db/maintenance-job.ts';
import { listen, notify } from '../core/db/notify.ts';
import { sharedCatalogue } from '../core/errors.ts';
import type { PayloadOf } from '../core/jobs.ts';
import { fetchCatalogue } from '../core/net/errors.ts';
import { PRUNE_BUCKETS_CRON, pruneRateBucketsJob } from '../core/rate-limit/prune-buckets-job.ts';
import { webhookDeliverJob } from '../core/webhooks.ts';
import type { Deps } from '../deps.ts';
import { IDEMPOTENCY_PRUNE_CRON, pruneIdempotencyJob } from '../http/idempotency.ts';
import { defineArea } from './manifest.ts';

// Not an area: what the platform's own infrastructure (core and the transports) contributes to the same
// lists — its jobs, schedules and migration sets, and the credential-revocation channel between processes.
// First in the list: its tables come before every area's, and its listener stops last.

const REVOKED_CHANNEL = 'pier_credential_revoked';

export const infrastructure = defineArea({
  name: 'infrastructure',
  errors: [sharedCatalogue, blobCatalogue, fetchCatalogue, browserCatalogue, modelCatalogue],
  jobs: [sweepBlobTempJob, dbMaintenanceJob, webhookDeliverJob, pruneIdempotencyJob, pruneRateBucketsJob],
  schedules: [
    { job: 'blobs.sweep-temp', cron: SWEEP_TEMP_CRON },
    { job: 'v1.idempotency.prune', cron: IDEMPOTENCY_PRUNE_CRON },
    { job: 'rate-buckets.prune', cron: PRUNE_BUCKETS_CRON },
    // PGlite's VACUUM/ANALYZE passes (docs/decisions/026); off (or on PostgreSQL), an older schedule goes.
    { job: DB_MAINTENANCE_JOB, cron: maintenanceSchedule },
  ],
  migrations: [
    { area: 'core', schema: ['src/core/**/tables.ts'] },
    { area: 'webhooks', schema: ['src/core/webhook-tables.ts'] },
    { area: 'v1', schema: ['src/core/v1-tables.ts'] },
    { area: 'usage', schema: ['src/core/usage-tables.ts'] },
  ],
  start: async (deps) => {
    // Revocations by other nodes arrive here. While this connection is down they could be missed, so the
    // credential cache is bypassed (every request checks the database: fail closed) until it listens again.
    const unlisten = await listen(
      deps.db,
      deps.config.databaseUrl,
      REVOKED_CHANNEL,
      (keyId) => deps.credentials.forget(keyId),
      {
        onLost: () => {
          deps.log.warn('revocation listener lost; checking every credential against the database');
          deps.credentials.trustCache(false);
        },
        onRestored: () => {
          deps.log.info('revocation listener restored');
          deps.credentials.trustCache(true);
        },
      },
    );
    deps.credentials.broadcastRevoke = (keyId) => notify(deps.db, REVOKED_CHANNEL, keyId);
    return unlisten;
  },
  // A maintenance pass soon after start-up too: the table counters it goes by start from zero per process.
  onWorkerStart: async (deps) => {
    if (maintenanceSchedule(deps) === null) return;
    await deps.jobs.enqueue(
      DB_MAINTENANCE_JOB,
      {},
      { startAfter: new Date(Date.now() + STARTUP_PASS_DELAY_MS), singletonKey: 'startup' },
    );
  },
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../core/jobs.ts' {
  interface JobPayloads {
    'blobs.sweep-temp': PayloadOf<typeof sweepBlobTempJob>;
    'db.maintenance': PayloadOf<typeof dbMaintenanceJob>;
    'webhooks.deliver': PayloadOf<typeof webhookDeliverJob>;
    'v1.idempotency.prune': PayloadOf<typeof pruneIdempotencyJob>;
    'rate-buckets.prune': PayloadOf<typeof pruneRateBucketsJob>;
  }
}

function maintenanceSchedule(deps: Deps): string | null {
  const interval = deps.config.pgliteMaintenanceIntervalMin;
  return deps.db.kind !== 'pglite' || interval === 0 ? null : maintenanceCron(interval);
}
