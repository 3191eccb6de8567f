// What the PGlite maintenance pass (src/core/db/maintenance.ts, docs/decisions/026) costs and buys
// (`npm run bench:pglite-maintenance`), on PGlite in memory:
//  1. an idle pass (nothing over a threshold) on a database with Pier's migrations: the price paid every
//     minute;
//  2. a queue-like table of 100k rows, every row updated once (100k dead rows): how long the pass blocks
//     PGlite, and a lookup by primary key (100 ids, as mail's batched claim does) before and after it, with
//     its plan;
//  3. five rounds of updating every row, without and with a pass after each round: the table's size.

import { migrationSets } from '../src/areas/index.ts';
import { type Db, openDb } from '../src/core/db/client.ts';
import { maintenancePlan, runMaintenance } from '../src/core/db/maintenance.ts';
import { migrate } from '../src/core/db/migrate.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
}

async function idlePass(): Promise<void> {
  const db = await openDb({});
  await migrate(db, migrationSets);
  await runMaintenance(db); // the catalogs the migrations filled
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_class WHERE relkind IN ('r', 'm') AND relpersistence <> 't'`,
  );
  const times: number[] = [];
  for (let i = 0; i < 20; i++) times.push((await timed(() => runMaintenance(db)))[1]);
  console.log(`idle pass over ${rows[0]!.n} tables (Pier migrated): median ${median(times).toFixed(1)} ms`);
  await db.close();
}

async function createQueue(db: Db, name: string): Promise<void> {
  await db.exec(`CREATE TABLE ${name} (
      id uuid PRIMARY KEY, state text NOT NULL, attempts int NOT NULL, data jsonb NOT NULL,
      updated_at timestamptz NOT NULL);
    CREATE INDEX ${name}_state ON ${name} (state);
    INSERT INTO ${name}
      SELECT gen_random_uuid(), 'done', 0, jsonb_build_object('to', 'someone' || g || '@example.com'), now()
      FROM generate_series(1, ${ROWS}) g;`);
}

async function pages(db: Db, name: string): Promise<number> {
  const { rows } = await db.query<{ p: number }>(`SELECT (pg_relation_size('${name}') / 8192)::int AS p`);
  return rows[0]!.p;
}

type PlanNode = {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Plan Rows': number;
  Plans?: PlanNode[];
};

/** A plan on one line: each node with its index or table and the rows the planner expected. */
function summarize(n: PlanNode): string {
  const on = n['Index Name'] ?? n['Relation Name'];
  const self = `${n['Node Type']}${on ? ` ${on}` : ''} (${n['Plan Rows']} rows)`;
  return n.Plans?.length ? `${self} ← ${n.Plans.map(summarize).join(' + ')}` : self;
}

async function lookup(db: Db, name: string, ids: string[]): Promise<{ ms: number; plan: string }> {
  const sql = `SELECT count(*) FROM ${name} WHERE id = ANY($1::uuid[]) AND state = 'done'`;
  const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${sql}`, [
    ids,
  ]);
  await db.query(sql, [ids]);
  const times: number[] = [];
  for (let i = 0; i < 20; i++) times.push((await timed(() => db.query(sql, [ids])))[1]);
  return { ms: median(times), plan: summarize(rows[0]!['QUERY PLAN'][0].Plan) };
}

async function deadRows(): Promise<void> {
  const db = await openDb({});
  await createQueue(db, 'queue');
  const { rows } = await db.query<{ id: string }>('SELECT id FROM queue ORDER BY random() LIMIT 100');
  const ids = rows.map((r) => r.id);
  const [, updateMs] = await timed(() =>
    db.exec(`UPDATE queue SET attempts = attempts + 1, updated_at = now()`),
  );
  const before = await lookup(db, 'queue', ids);
  const plan = await maintenancePlan(db);
  const [pass, passMs] = await timed(() => runMaintenance(db));
  const after = await lookup(db, 'queue', ids);
  console.log(`\n${ROWS} rows, every row updated once (${updateMs.toFixed(0)} ms): ${ROWS} dead rows`);
  console.log(`  planned: ${plan.map((s) => `${s.table} [${s.reasons.join(', ')}]`).join('; ')}`);
  for (const s of pass.done)
    console.log(`  ${s.table}: ${s.vacuum ? 'VACUUM' : ''}${s.analyze ? ' ANALYZE' : ''} ${s.ms} ms`);
  console.log(`  whole pass ${passMs.toFixed(0)} ms`);
  console.log(`  lookup of 100 ids before: ${before.ms.toFixed(2)} ms  ${before.plan}`);
  console.log(`  lookup of 100 ids after:  ${after.ms.toFixed(2)} ms  ${after.plan}`);
  const [, analyzeMs] = await timed(() => db.exec('ANALYZE queue'));
  console.log(`  ANALYZE alone afterwards: ${analyzeMs.toFixed(0)} ms`);
  await db.close();
}

async function growth(): Promise<void> {
  const rounds = async (pass: boolean) => {
    const db = await openDb({});
    await createQueue(db, 'queue');
    const start = await pages(db, 'queue');
    let passMs = 0;
    for (let round = 0; round < 5; round++) {
      await db.exec('UPDATE queue SET attempts = attempts + 1');
      if (pass) passMs += (await timed(() => runMaintenance(db)))[1];
    }
    const end = await pages(db, 'queue');
    await db.close();
    return { start, end, passMs };
  };
  const without = await rounds(false);
  const withPass = await rounds(true);
  console.log(`\nfive rounds of updating all ${ROWS} rows (the table starts at ${without.start} pages):`);
  console.log(`  no pass:                 ${without.end} pages`);
  console.log(
    `  a pass after each round: ${withPass.end} pages (the passes took ${withPass.passMs.toFixed(0)} ms in all)`,
  );
}

await idlePass();
await deadRows();
await growth();
