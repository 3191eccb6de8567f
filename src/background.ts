import { SWEEP_TEMP_CRON } from './core/blobs/sweep-temp-job.ts';
import { DB_MAINTENANCE_JOB, maintenanceCron, STARTUP_PASS_DELAY_MS } from './core/db/maintenance-job.ts';
import { listen, notify } from './core/db/notify.ts';
import type { Deps } from './deps.ts';
import { startAccessCache } from './platform/access-cache.ts';
import { announceSecretChanges, startHostingRuntime } from './platform/runtime/runtime.ts';
import { IDEMPOTENCY_PRUNE_CRON } from './v1/idempotency.ts';
import { MAIL_SWEEP_CRON, MAIL_SWEEP_JOB } from './v1/mail/sweeper.ts';
import { closeMailTransport } from './v1/mail/worker.ts';
import { scheduleMemoryJobs } from './v1/memory/worker.ts';

const REVOKED_CHANNEL = 'pier_credential_revoked';

/**
 * Starts what runs beside the HTTP server: the cross-process cache invalidation, the job queue and,
 * with the worker role, the job consumers. Returns a stop function that drains running jobs.
 */
export async function startBackground(
  deps: Deps,
  opts: { worker: boolean; router?: boolean },
): Promise<() => Promise<void>> {
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
  const stopAccessCache = await startAccessCache(deps);
  announceSecretChanges(deps);
  // The hosting runtime (router role) is up before the workers, so deploy jobs find it.
  const hosting = opts.router ? await startHostingRuntime(deps) : null;
  await deps.jobs.start();
  if (opts.worker) {
    // Schedules live in the database (one row per name), so every worker may (re)state them at start.
    await deps.jobs.schedule('blobs.sweep-temp', SWEEP_TEMP_CRON, {});
    await scheduleMemoryJobs(deps);
    await deps.jobs.schedule('v1.idempotency.prune', IDEMPOTENCY_PRUNE_CRON, {});
    await deps.jobs.schedule(MAIL_SWEEP_JOB, MAIL_SWEEP_CRON, {});
    await scheduleDbMaintenance(deps);
    await deps.jobs.work();
  }
  return async () => {
    await deps.jobs.stop(deps.config.shutdownGraceMs);
    await closeMailTransport(deps);
    await stopAccessCache();
    await hosting?.stop();
    await unlisten();
  };
}

/**
 * PGlite's VACUUM/ANALYZE passes (docs/decisions/026): on a schedule, and once soon after start-up, since
 * the table counters they go by start from zero with each process. Turned off (or on PostgreSQL, which
 * vacuums itself), a schedule stated by an earlier configuration is removed.
 */
async function scheduleDbMaintenance(deps: Deps): Promise<void> {
  const interval = deps.config.pgliteMaintenanceIntervalMin;
  if (deps.db.kind !== 'pglite' || interval === 0) {
    await deps.jobs.unschedule(DB_MAINTENANCE_JOB);
    return;
  }
  await deps.jobs.schedule(DB_MAINTENANCE_JOB, maintenanceCron(interval), {});
  await deps.jobs.enqueue(
    DB_MAINTENANCE_JOB,
    {},
    { startAfter: new Date(Date.now() + STARTUP_PASS_DELAY_MS), singletonKey: 'startup' },
  );
}
