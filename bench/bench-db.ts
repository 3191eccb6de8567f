import crypto from 'node:crypto';
import pg from 'pg';

// The database a memory bench runs on: PGlite in memory by default; with BENCH_DATABASE_URL (a
// PostgreSQL server with pgvector, e.g. postgres://postgres@127.0.0.1:5432/pier_ci) a fresh database
// created beside the one named there and dropped at the end, so a run never mixes with other data.

export type BenchDb = { url?: string; label: string; drop: () => Promise<void> };

export async function benchDatabase(): Promise<BenchDb> {
  const admin = process.env.BENCH_DATABASE_URL;
  if (!admin) return { label: 'PGlite (in memory)', drop: async () => {} };
  const name = `pier_bench_${crypto.randomBytes(5).toString('hex')}`;
  const run = async (text: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      return await c.query(text);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const version = (await run('SHOW server_version')).rows[0]?.server_version as string;
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    label: `PostgreSQL ${version.split(' ')[0]}`,
    drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => {}),
  };
}
