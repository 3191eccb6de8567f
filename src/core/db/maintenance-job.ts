import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { defineJob } from '../jobs.ts';
import type { Db } from './client.ts';
import { runMaintenance } from './maintenance.ts';

// PGlite's autovacuum stand-in (docs/decisions/026), scheduled by the worker role (background.ts) every
// PGLITE_MAINTENANCE_INTERVAL_MIN minutes and once shortly after start-up. On PostgreSQL it is never
// scheduled, and a job that reaches a handler anyway (a schedule stated by an older configuration) does
// nothing: the server's own autovacuum does this work.

export const DB_MAINTENANCE_JOB = 'db.maintenance';
/** The start-up pass waits this long, so it does not compete with a process that is still starting. */
export const STARTUP_PASS_DELAY_MS = 30_000;
/** No further table is started once a pass has run this long; the next pass takes the rest. */
const PASS_BUDGET_MS = 5_000;
/** A single statement blocking PGlite this long is worth an info line (the rest are debug). */
const SLOW_STEP_MS = 1_000;

/** The schedule of an interval that divides 60 (config.ts refuses the others). */
export function maintenanceCron(intervalMin: number): string {
  if (intervalMin === 60) return '0 * * * *';
  return intervalMin === 1 ? '* * * * *' : `*/${intervalMin} * * * *`;
}

type MaintenanceDeps = {
  db: Db;
  config: { pgliteMaintenanceIntervalMin: number };
  log: FastifyBaseLogger;
};

export const dbMaintenanceJob = defineJob({
  name: DB_MAINTENANCE_JOB,
  schema: z.object({}),
  cronOnly: true,
  // A pass is bounded by its budget plus one table; a stuck one must not hold back the next for long.
  expireInSeconds: 10 * 60,
  handle: async (_data, { deps }: { deps: MaintenanceDeps }) => {
    if (deps.db.kind !== 'pglite' || deps.config.pgliteMaintenanceIntervalMin === 0) return;
    const started = performance.now();
    const result = await runMaintenance(deps.db, { budgetMs: PASS_BUDGET_MS });
    for (const f of result.failed) deps.log.warn({ table: f.table, err: f.error }, 'maintenance step failed');
    if (!result.done.length) return;
    const ms = Math.round(performance.now() - started);
    for (const s of result.done)
      if (s.ms >= SLOW_STEP_MS)
        deps.log.info({ table: s.table, reasons: s.reasons, ms: s.ms }, 'slow maintenance step');
    deps.log.debug(
      {
        ms,
        vacuumed: result.done.filter((s) => s.vacuum).map((s) => s.table),
        analyzed: result.done.filter((s) => s.analyze && !s.vacuum).map((s) => s.table),
        deferred: result.deferred.map((s) => s.table),
      },
      'database maintenance pass',
    );
  },
});
