import { describe, expect, it } from 'vitest';
import { onPostgres, testApp } from '../../../test/harness.ts';
import { spyDb } from '../../../test/spy-db.ts';
import { ConfigError, loadConfig } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import type { Db } from './client.ts';
import { DB_MAINTENANCE_JOB, dbMaintenanceJob, maintenanceCron } from './maintenance-job.ts';

// The db.maintenance job in a running app: scheduled by the worker role on PGlite only, and run by it.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fastCron = { cronMonitorIntervalSeconds: 1, cronWorkerIntervalSeconds: 1 };

async function vacuumCount(db: Db, table: string): Promise<number> {
  await db.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await db.query<{ n: number }>(
    `SELECT vacuum_count::int AS n FROM pg_stat_user_tables WHERE schemaname = 'public' AND relname = $1`,
    [table],
  );
  return rows[0]!.n;
}

async function churn(db: Db, table: string): Promise<void> {
  await db.exec(`CREATE TABLE ${table} (id int PRIMARY KEY, v int NOT NULL);
    INSERT INTO ${table} SELECT g, 0 FROM generate_series(1, 1000) g;
    UPDATE ${table} SET v = 1;`);
}

async function schedules(deps: Deps) {
  return (await deps.jobs.boss.getSchedules()).filter((s) => s.name === DB_MAINTENANCE_JOB);
}

describe('PGLITE_MAINTENANCE_INTERVAL_MIN', () => {
  it('defaults to every minute, takes divisors of 60 and 0 (off), and refuses the rest', () => {
    expect(loadConfig({}).pgliteMaintenanceIntervalMin).toBe(1);
    expect(loadConfig({ PGLITE_MAINTENANCE_INTERVAL_MIN: '0' }).pgliteMaintenanceIntervalMin).toBe(0);
    expect(loadConfig({ PGLITE_MAINTENANCE_INTERVAL_MIN: '15' }).pgliteMaintenanceIntervalMin).toBe(15);
    for (const bad of ['7', '90', '-1', 'often'])
      expect(() => loadConfig({ PGLITE_MAINTENANCE_INTERVAL_MIN: bad })).toThrow(ConfigError);
    expect([1, 5, 15, 60].map(maintenanceCron)).toEqual([
      '* * * * *',
      '*/5 * * * *',
      '*/15 * * * *',
      '0 * * * *',
    ]);
  });
});

describe.skipIf(onPostgres)('db.maintenance on PGlite', () => {
  it('is scheduled by the worker role and vacuums a churned table when the schedule fires', async () => {
    const t = await testApp({ background: true, jobOptions: fastCron });
    try {
      expect(await schedules(t.deps)).toMatchObject([{ cron: '* * * * *' }]);
      // And one pass soon after start-up, for when the first scheduled one is far off.
      const { rows } = await t.deps.db.query<{ due: number }>(
        `SELECT extract(epoch FROM start_after - now())::int AS due FROM pgboss.job
         WHERE name = $1 AND singleton_key = 'startup'`,
        [DB_MAINTENANCE_JOB],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]!.due).toBeGreaterThan(15);

      await churn(t.deps.db, 'busy');
      expect(await vacuumCount(t.deps.db, 'busy')).toBe(0);
      const end = Date.now() + 30_000;
      while ((await vacuumCount(t.deps.db, 'busy')) === 0 && Date.now() < end) await sleep(250);
      expect(await vacuumCount(t.deps.db, 'busy')).toBe(1);
    } finally {
      await t.close();
    }
  }, 60_000);

  it('turned off: the schedule an earlier start stated is removed, and a job still queued does nothing', async () => {
    const t = await testApp({ persist: true, background: true });
    let next: Awaited<ReturnType<typeof t.restart>> | undefined;
    try {
      expect(await schedules(t.deps)).toHaveLength(1);
      next = await t.restart({ PGLITE_MAINTENANCE_INTERVAL_MIN: '0' });
      expect(await schedules(next.deps)).toEqual([]);

      await churn(next.deps.db, 'ignored');
      await dbMaintenanceJob.handle!({}, { id: 'x', retryCount: 0, deps: next.deps });
      expect(await vacuumCount(next.deps.db, 'ignored')).toBe(0);
    } finally {
      await (next ?? t).close();
    }
  }, 60_000);
});

describe.skipIf(!onPostgres)('db.maintenance on PostgreSQL', () => {
  it('is not scheduled, and its handler sends nothing to the database', async () => {
    const t = await testApp({ background: true });
    try {
      expect(await schedules(t.deps)).toEqual([]);
      await churn(t.deps.db, 'busy');
      const { db: spy, sent } = spyDb(t.deps.db);
      await dbMaintenanceJob.handle!({}, { id: 'x', retryCount: 0, deps: { ...t.deps, db: spy } });
      expect(sent).toEqual([]);
    } finally {
      await t.close();
    }
  }, 60_000);
});
