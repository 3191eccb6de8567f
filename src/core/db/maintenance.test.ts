import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, openTestDb, restartableTestDb } from '../../../test/harness.ts';
import { spyDb } from '../../../test/spy-db.ts';
import type { Db } from './client.ts';
import { maintenancePlan, runMaintenance } from './maintenance.ts';

// The autovacuum stand-in on a bare database: what PGlite's own statistics say before and after a pass.

type TableStats = {
  dead: number;
  vacuums: number;
  analyzes: number;
  reltuples: number;
  statsRows: number;
};

async function tableStats(db: Db, table: string): Promise<TableStats> {
  await db.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await db.query<TableStats>(
    `SELECT s.n_dead_tup::int AS dead, s.vacuum_count::int AS vacuums, s.analyze_count::int AS analyzes,
            c.reltuples::int AS reltuples,
            (SELECT count(*)::int FROM pg_stats p WHERE p.schemaname = 'public' AND p.tablename = $1) AS "statsRows"
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.schemaname = 'public' AND s.relname = $1`,
    [table],
  );
  return rows[0]!;
}

async function createTable(db: Db, table: string, rows: number): Promise<void> {
  await db.exec(`CREATE TABLE ${table} (id int PRIMARY KEY, v int NOT NULL, note text);
    INSERT INTO ${table} SELECT g, 0, repeat('x', 40) FROM generate_series(1, ${rows}) g;`);
}

const tablesIn = (steps: { table: string }[]) => steps.map((s) => s.table);

describe.skipIf(onPostgres)('PGlite maintenance pass', () => {
  let db: Db;
  beforeAll(async () => {
    ({ db } = await openTestDb());
  });
  afterAll(async () => {
    await db?.close();
  });

  it('vacuums and analyzes a table once its dead rows pass 50 + 20 % of its rows', async () => {
    await createTable(db, 'churn', 1000);
    await db.exec('UPDATE churn SET v = 1 WHERE id <= 200; DELETE FROM churn WHERE id > 900;');
    const before = await tableStats(db, 'churn');
    expect(before).toMatchObject({ dead: 300, vacuums: 0, analyzes: 0, statsRows: 0 });

    const pass = await runMaintenance(db);
    const step = pass.done.find((s) => s.table === 'public.churn');
    expect(step).toMatchObject({ vacuum: true, analyze: true });
    expect(step?.reasons).toEqual(expect.arrayContaining(['dead', 'modified']));
    const after = await tableStats(db, 'churn');
    expect(after).toMatchObject({ dead: 0, vacuums: 1, analyzes: 1, reltuples: 900 });
    // The planner now has column statistics for it.
    expect(after.statsRows).toBeGreaterThan(0);

    // Nothing left to do until it churns again.
    expect(tablesIn(await maintenancePlan(db))).not.toContain('public.churn');
  });

  it('leaves a table under the thresholds alone, and only analyzes one past the analyze threshold', async () => {
    await createTable(db, 'quiet', 1000);
    // Counters not yet sent to the statistics system would be added after the VACUUM's reset.
    await db.query('SELECT pg_stat_force_next_flush()');
    await db.exec('VACUUM (ANALYZE) quiet');
    // 100 dead rows (vacuum needs > 250) and 100 changes since the analyze (analyze needs > 150).
    await db.exec('UPDATE quiet SET v = 1 WHERE id <= 100');
    let pass = await runMaintenance(db);
    expect(tablesIn(pass.done)).not.toContain('public.quiet');
    expect(await tableStats(db, 'quiet')).toMatchObject({ dead: 100, vacuums: 1, analyzes: 1 });

    // 60 more: 160 changes pass the analyze threshold; 160 dead rows are still under the vacuum one.
    await db.exec('UPDATE quiet SET v = 2 WHERE id > 100 AND id <= 160');
    pass = await runMaintenance(db);
    expect(pass.done.find((s) => s.table === 'public.quiet')).toMatchObject({
      vacuum: false,
      analyze: true,
      reasons: ['modified'],
    });
    expect(await tableStats(db, 'quiet')).toMatchObject({ dead: 160, vacuums: 1, analyzes: 2 });
  });

  it('stops starting tables once its time budget is spent; the next pass does the rest', async () => {
    await createTable(db, 'first_of_two', 1000);
    await createTable(db, 'second_of_two', 1000);
    await db.exec('UPDATE first_of_two SET v = 1; UPDATE second_of_two SET v = 1 WHERE id <= 500;');
    const first = await runMaintenance(db, { budgetMs: 0 });
    // Most overdue first: 1000 dead rows over a limit of 250 before 500 over 250.
    expect(first.done).toHaveLength(1);
    expect(first.done[0]!.table).toBe('public.first_of_two');
    expect(tablesIn(first.deferred)).toContain('public.second_of_two');
    expect((await tableStats(db, 'second_of_two')).vacuums).toBe(0);

    await runMaintenance(db);
    expect((await tableStats(db, 'second_of_two')).vacuums).toBe(1);
  });

  it('vacuums a table with a vector index without index cleanup, which would rebuild graph links for seconds', async () => {
    await db.exec(`CREATE EXTENSION IF NOT EXISTS vector;
      CREATE TABLE vectors (id int PRIMARY KEY, e vector(3) NOT NULL, note text NOT NULL);
      CREATE INDEX vectors_hnsw ON vectors USING hnsw (e vector_cosine_ops);
      INSERT INTO vectors
        SELECT g, ARRAY[random(), random(), random()]::vector, repeat('x', 200) FROM generate_series(1, 1000) g;`);
    await db.query('SELECT pg_stat_force_next_flush()');
    await db.exec('VACUUM (ANALYZE) vectors');
    // 700 of 1000 rows replaced: the table grows past the size rule (its dead rows alone are not counted
    // for a table with a vector index, see below).
    await db.exec(`UPDATE vectors SET e = ARRAY[random(), random(), random()]::vector WHERE id <= 700`);
    const sent: string[] = [];
    const spy: Db = {
      ...db,
      exec: (text) => {
        sent.push(text);
        return db.exec(text);
      },
    };
    const pass = await runMaintenance(spy);
    expect(pass.done.find((s) => s.table === 'public.vectors')).toMatchObject({
      vectorIndex: true,
      vacuum: true,
      reasons: expect.arrayContaining(['grown']),
    });
    // Only it: tables without a vector index get the full VACUUM.
    expect(sent.filter((s) => s.includes('INDEX_CLEANUP'))).toEqual([
      'VACUUM (INDEX_CLEANUP OFF, ANALYZE) public.vectors',
    ]);
    // The dead rows' line pointers stay and still count as dead rows, yet the table is not picked again
    // on every pass for them.
    expect(await tableStats(db, 'vectors')).toMatchObject({ dead: 700, vacuums: 2 });
    expect(tablesIn(await maintenancePlan(db))).not.toContain('public.vectors');
  });

  it('goes on with the next table when one statement fails', async () => {
    await createTable(db, 'breaks', 1000);
    await createTable(db, 'still_done', 1000);
    await db.exec('UPDATE breaks SET v = 1; UPDATE still_done SET v = 1;');
    // Stands in for a table dropped between the plan and its step.
    const failing: Db = {
      ...db,
      exec: (text) => (text.includes('public.breaks') ? Promise.reject(new Error('gone')) : db.exec(text)),
    };
    const pass = await runMaintenance(failing);
    expect(pass.failed).toMatchObject([{ table: 'public.breaks', error: 'gone' }]);
    expect(tablesIn(pass.done)).toContain('public.still_done');
    expect((await tableStats(db, 'still_done')).vacuums).toBe(1);
    expect(tablesIn(await maintenancePlan(db))).toContain('public.breaks');
  });
});

describe.skipIf(onPostgres)('PGlite maintenance after a restart', () => {
  it('finds dead rows an earlier process left behind by the table having grown, though PGlite lost its counters', async () => {
    const store = await restartableTestDb();
    try {
      const db1 = await store.open();
      await createTable(db1, 'left_behind', 2000);
      await db1.query('SELECT pg_stat_force_next_flush()');
      await db1.exec('VACUUM (ANALYZE) left_behind');
      await db1.exec('UPDATE left_behind SET v = 1; UPDATE left_behind SET v = 2;');
      await db1.close();

      const db2 = await store.open();
      try {
        // PGlite keeps table counters in memory only: the 4000 dead rows are invisible to them.
        expect(await tableStats(db2, 'left_behind')).toMatchObject({ dead: 0, vacuums: 0 });
        const plan = await maintenancePlan(db2);
        expect(plan.find((s) => s.table === 'public.left_behind')).toMatchObject({
          vacuum: true,
          analyze: true,
          reasons: ['grown'],
        });
        const pagesBefore = await relationPages(db2, 'left_behind');
        await runMaintenance(db2);
        expect(await tableStats(db2, 'left_behind')).toMatchObject({ vacuums: 1, analyzes: 1 });
        expect(tablesIn(await maintenancePlan(db2))).not.toContain('public.left_behind');
        // The vacuum made the dead rows' space reusable: the same updates again do not grow the table.
        await db2.exec('UPDATE left_behind SET v = 3');
        await runMaintenance(db2);
        await db2.exec('UPDATE left_behind SET v = 4');
        expect(await relationPages(db2, 'left_behind')).toBeLessThanOrEqual(pagesBefore);
      } finally {
        await db2.close();
      }
    } finally {
      await store.drop();
    }
  }, 60_000);
});

async function relationPages(db: Db, table: string): Promise<number> {
  const { rows } = await db.query<{ pages: number }>(
    `SELECT (pg_relation_size($1::regclass) / current_setting('block_size')::int)::int AS pages`,
    [table],
  );
  return rows[0]!.pages;
}

describe.skipIf(!onPostgres)('maintenance on PostgreSQL', () => {
  it('plans and runs nothing: the server vacuums itself', async () => {
    const { db, drop } = await openTestDb();
    try {
      await createTable(db, 'churn', 1000);
      await db.exec('UPDATE churn SET v = 1');
      const { db: spy, sent } = spyDb(db);
      expect(await maintenancePlan(spy)).toEqual([]);
      expect(await runMaintenance(spy)).toEqual({ done: [], deferred: [], failed: [] });
      expect(sent).toEqual([]);
    } finally {
      await db.close();
      await drop();
    }
  });
});
