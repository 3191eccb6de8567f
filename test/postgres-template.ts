import pg from 'pg';
import { migrationSets } from '../src/areas/index.ts';
import { openDb } from '../src/core/db/client.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { prepareQueueSchema } from './queue-schema.ts';
import { templateKey } from './template-key.ts';

// Global setup of the postgres project: one migrated database that every test database is created from
// (CREATE DATABASE … TEMPLATE), instead of running all migrations again in each. It stays on the server
// between runs, named by the migrations it holds (pier_tpl_<hash>); see docs/testing.md.

async function admin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export default async function setup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  // Memory's migrations need pgvector; the suite's PostgreSQL pass must run them (scripts/install-pgvector.sh
  // installs it, .ci/run calls it), so a server without it fails here instead of skipping memory tests.
  const vector = await admin(url, async (c) => {
    const r = await c.query<{ v: string | null }>(
      "SELECT default_version AS v FROM pg_available_extensions WHERE name = 'vector'",
    );
    return r.rows[0]?.v ?? null;
  });
  if (!vector)
    throw new Error(
      'The test PostgreSQL has no pgvector (the `vector` extension): run scripts/install-pgvector.sh as root.',
    );
  // The template is named by what it holds, the pgvector version included (a template made before pgvector
  // was installed has no memory tables).
  const name = `pier_tpl_${templateKey()}_v${vector.replaceAll('.', '')}`;
  const exists = await admin(url, async (c) => {
    const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return r.rowCount === 1;
  });
  if (!exists) {
    const tmp = `${name}_${process.pid}`;
    await admin(url, (c) => c.query(`CREATE DATABASE ${tmp}`));
    const at = new URL(url);
    at.pathname = `/${tmp}`;
    const db = await openDb({ databaseUrl: at.toString(), poolSize: 2 });
    await migrate(db, migrationSets);
    await prepareQueueSchema(db);
    await db.close();
    // A concurrent run may have made the same template meanwhile; then its copy serves and ours goes.
    await admin(url, async (c) => {
      try {
        await c.query(`ALTER DATABASE ${tmp} RENAME TO ${name}`);
      } catch {
        await c.query(`DROP DATABASE IF EXISTS ${tmp}`);
      }
    });
  }
  // Read by test/harness.ts in the test workers, which inherit this environment.
  process.env.PIER_TEST_PG_TEMPLATE = name;
}
