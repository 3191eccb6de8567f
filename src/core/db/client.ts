import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';

export type Orm = PgDatabase<PgQueryResultHKT>;

/** Something that runs parameterised SQL: the database itself or one of its transactions. */
export type Queryable = {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
};

export type Db = {
  kind: 'pglite' | 'postgres';
  orm: Orm;
  /** Raw parameterised SQL, the same on both drivers. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  /** One or more statements without parameters. */
  exec(text: string): Promise<void>;
  /** Runs fn in one transaction (raw SQL; committed when fn resolves, rolled back when it throws). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Extensions that migrations found available (e.g. 'vector'). */
  features: Set<string>;
  pglite?: PGlite;
  pool?: pg.Pool;
  close(): Promise<void>;
};

export type DbOptions = { databaseUrl?: string; dataDir?: string; poolSize?: number };

/** Opens PostgreSQL when a URL is given, otherwise PGlite under dataDir (in memory when dataDir is undefined). */
export async function openDb(opts: DbOptions): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.poolSize ?? 10);
  return openPglite(opts.dataDir);
}

async function openPglite(dataDir?: string): Promise<Db> {
  if (dataDir) fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const client = await PGlite.create({ dataDir, extensions: { vector, pg_trgm } });
  const orm = drizzlePglite(client) as unknown as Orm;
  return {
    kind: 'pglite',
    orm,
    pglite: client,
    features: new Set(),
    query: async (text, params) => {
      const r = await client.query(text, params as unknown[]);
      return { rows: r.rows as never[] };
    },
    exec: async (text) => {
      await client.exec(text);
    },
    transaction: (fn) =>
      client.transaction((tx) =>
        fn({
          query: async (text, params) => {
            const r = await tx.query(text, params as unknown[]);
            return { rows: r.rows as never[] };
          },
        }),
      ),
    close: async () => {
      if (!client.closed) await client.close();
    },
  };
}

async function openPostgres(url: string, poolSize: number): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client that errors (server restart) must not crash the process.
  pool.on('error', () => {});
  const orm = drizzleNodePg(pool) as unknown as Orm;
  await orm.execute(sql`select 1`);
  return {
    kind: 'postgres',
    orm,
    pool,
    features: new Set(),
    query: async (text, params) => {
      const r = await pool.query(text, params as unknown[]);
      return { rows: r.rows };
    },
    exec: async (text) => {
      await pool.query(text);
    },
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn({
          query: async (text, params) => ({ rows: (await client.query(text, params as unknown[])).rows }),
        });
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: async () => {
      await pool.end();
    },
  };
}
