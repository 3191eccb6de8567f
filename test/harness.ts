import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { dropAppDatabase } from '../src/areas/hosting/runtime/app-databases.ts';
import { type HostingRuntime, hostingRuntime } from '../src/areas/hosting/runtime/runtime.ts';
import { appDatabases } from '../src/areas/hosting/runtime/tables.ts';
import { startBackground } from '../src/background.ts';
import { loadConfig } from '../src/config.ts';
import { type Clock, ManualClock } from '../src/core/clock.ts';
import { Keyring } from '../src/core/crypto.ts';
import { type Db, openDb } from '../src/core/db/client.ts';
import { createDeps, createLogger, type DepsOverrides } from '../src/create-deps.ts';
import type { Deps } from '../src/deps.ts';
import { buildApp } from '../src/http/app.ts';

// Builds a real Pier app on a fresh database: PGlite in memory, or a new PostgreSQL database when the
// suite runs in its postgres project (PIER_TEST_DB=postgres with TEST_DATABASE_URL).

export const onPostgres = process.env.PIER_TEST_DB === 'postgres';

export type TestApp = {
  app: FastifyInstance;
  deps: Deps;
  clock: Clock;
  dataDir: string;
  /** http://127.0.0.1:<port> when started with listen. */
  url: string;
  /** The hosting runtime when started with hosting. */
  runtime?: HostingRuntime;
  call(
    name: string,
    body: unknown,
    token?: string,
    headers?: Record<string, string>,
    opts?: CallOptions,
  ): Promise<LightMyRequestResponse>;
  /**
   * Closes this app and opens a new one on the same storage (PGlite dataDir or PostgreSQL database) with
   * the same keyring and clock: what a process restart keeps. Needs `persist: true`. `env` replaces the
   * variables given at start (an operator changing the configuration between two runs).
   */
  restart(env?: Record<string, string>): Promise<TestApp>;
  /** A v1 REST request (`url` relative to /v1) with an optional API key and JSON body. */
  v1(
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    key?: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
};

export type CallOptions = { remoteAddress?: string };

export type TestAppOptions = {
  env?: Record<string, string>;
  clock?: Clock;
  limits?: DepsOverrides['limits'];
  /** Start the job queue and workers (slower; only for tests that run jobs). */
  background?: boolean;
  /** Start the job queue without consuming it, so jobs can be enqueued and the test runs them itself. */
  queue?: boolean;
  /** Reuse a database (restart tests, see restartableTestDb); it is neither closed nor dropped on close. */
  db?: Db;
  /** Job queue polling and cron intervals (tests of schedules make them fast). */
  jobOptions?: DepsOverrides['jobOptions'];
  dataDir?: string;
  keyring?: Keyring;
  /** Keep the data on disk (PGlite under dataDir/db) or in a named PostgreSQL database, for restart(). */
  persist?: boolean;
  /** Capture the JSON logs (level info) into this stream. */
  logStream?: Writable;
  /** Start the hosting runtime (router role: app processes, host router) with the job workers. */
  hosting?: boolean;
  /** Listen on a real loopback port (needed for the host router and app traffic); a number picks it. */
  listen?: boolean | number;
  blobs?: DepsOverrides['blobs'];
  /** A logger of the test's own (to assert what is, and is not, logged). */
  log?: DepsOverrides['log'];
};

async function freshPostgres(): Promise<{ db: Db; drop: () => Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL!;
  const name = `pier_t_${crypto.randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  // A copy of the migrated template the postgres project's global setup made (test/postgres-template.ts).
  const template = process.env.PIER_TEST_PG_TEMPLATE;
  await c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const db = await openDb({ databaseUrl: url.toString(), poolSize: 5 });
  (db as Db & { url?: string }).url = url.toString();
  return {
    db,
    drop: async () => {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await d.end();
    },
  };
}

/**
 * Opens PGlite on `dataDir` (a fresh scratch folder when undefined). When the suite's global setup made a
 * migrated template (test/pglite-template.ts), a new folder starts as a copy of it: much faster than initdb and
 * the migrations. Outside vitest (benchmarks) it falls back to a fresh PGlite, in memory when no folder is given.
 */
async function openPgliteFrom(
  dataDir?: string,
): Promise<{ db: Db; dir?: string; drop: () => Promise<void> }> {
  const template = process.env.PIER_TEST_PGLITE_TEMPLATE;
  const scratch = process.env.PIER_TEST_PGLITE_SCRATCH;
  if (!template || !scratch) return { db: await openDb({ dataDir }), dir: dataDir, drop: async () => {} };
  const dir = dataDir ?? path.join(fs.mkdtempSync(path.join(scratch, 'db-')), 'db');
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) fs.cpSync(template, dir, { recursive: true });
  const db = await openDb({ dataDir: dir });
  const drop = async () => {
    if (!dataDir) fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  };
  return { db, dir, drop };
}

export async function openTestDb(): Promise<{ db: Db; url?: string; drop: () => Promise<void> }> {
  if (onPostgres) {
    const { db, drop } = await freshPostgres();
    return { db, url: (db as Db & { url?: string }).url, drop };
  }
  const { db, drop } = await openPgliteFrom();
  return { db, drop };
}

/**
 * A database that outlives the apps opened on it, for restart tests: every open() is a new connection to
 * the same data (PGlite in a temp folder, or one PostgreSQL database). Close each Db before the next open.
 */
export async function restartableTestDb(): Promise<{ open(): Promise<Db>; drop(): Promise<void> }> {
  if (onPostgres) {
    const first = await freshPostgres();
    const url = (first.db as Db & { url?: string }).url!;
    await first.db.close();
    return {
      open: async () => {
        const db = await openDb({ databaseUrl: url, poolSize: 5 });
        (db as Db & { url?: string }).url = url;
        return db;
      },
      drop: first.drop,
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-db-'));
  return {
    open: async () => (await openPgliteFrom(path.join(dir, 'db'))).db,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

type Storage = { db: Db; url?: string; drop: () => Promise<void>; reopen: () => Promise<Db> };

async function openStorage(opts: TestAppOptions, dataDir: string): Promise<Storage> {
  if (onPostgres) {
    const { db, drop } = await freshPostgres();
    const url = (db as Db & { url?: string }).url!;
    const reopen = async () => {
      const next = await openDb({ databaseUrl: url, poolSize: 5 });
      (next as Db & { url?: string }).url = url;
      return next;
    };
    return { db, url, drop, reopen };
  }
  const { db, dir, drop } = await openPgliteFrom(opts.persist ? path.join(dataDir, 'db') : undefined);
  return { db, drop, reopen: () => openDb({ dataDir: dir }) };
}

export async function testApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pier-test-'));
  const storage = opts.db ? null : await openStorage(opts, dataDir);
  return build(
    {
      ...opts,
      dataDir,
      clock: opts.clock ?? new ManualClock(Date.now()),
      keyring: opts.keyring ?? Keyring.random(),
    },
    opts.db ?? storage!.db,
    storage,
  );
}

async function build(
  opts: TestAppOptions & { dataDir: string; clock: Clock; keyring: Keyring },
  db: Db,
  storage: Storage | null,
): Promise<TestApp> {
  // LISTEN/NOTIFY on PostgreSQL opens its own connection, so the config needs the database's URL.
  const dbUrl = storage?.url ?? (db as Db & { url?: string }).url;
  const config = loadConfig({
    DATA_DIR: opts.dataDir,
    LOG_LEVEL: opts.logStream ? 'info' : 'silent',
    PUBLIC_URL: 'http://pier.test',
    // The test clock stands still unless a test moves it, so a bucket would never refill: the function
    // API's limits are out of the way unless a test sets them (src/http/fn-rate-limit.test.ts).
    FN_RATE_LIMIT_BURST: '1000000',
    FN_RATE_LIMIT_IP_BURST: '1000000',
    ...(dbUrl ? { DATABASE_URL: dbUrl } : {}),
    ...opts.env,
  });
  const deps = await createDeps(config, {
    db,
    clock: opts.clock,
    keyring: opts.keyring,
    limits: opts.limits,
    blobs: opts.blobs,
    jobOptions: opts.jobOptions,
    log: opts.log ?? (opts.logStream ? createLogger(config, opts.logStream) : undefined),
  });
  let stopBackground = async () => {};
  if (opts.background || opts.hosting)
    stopBackground = await startBackground(deps, { worker: true, router: opts.hosting });
  else if (opts.queue) {
    await deps.jobs.start();
    stopBackground = () => deps.jobs.stop(1000);
  }
  const runtime = hostingRuntime(deps);
  const app = await buildApp(deps, {
    logger: Boolean(opts.log ?? opts.logStream),
    hostRouter: runtime?.router,
  });
  await app.ready();
  let url = '';
  if (opts.listen) {
    await app.listen({ port: typeof opts.listen === 'number' ? opts.listen : 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  }
  const shutdown = async () => {
    // A test may leave a response unread on a keep-alive connection; close would wait for it forever.
    if (app.server.listening) app.server.closeAllConnections();
    await app.close();
    await stopBackground();
  };
  return {
    app,
    deps,
    clock: opts.clock,
    dataDir: opts.dataDir,
    url,
    runtime,
    call: (name, body, token, headers = {}, callOpts = {}) =>
      app.inject({
        method: 'POST',
        url: `/api/fn/${name}`,
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
        ...(callOpts.remoteAddress ? { remoteAddress: callOpts.remoteAddress } : {}),
      }),
    v1: (method, url, key, body, headers = {}) =>
      app.inject({
        method,
        url: `/v1${url}`,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...headers,
        },
        ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      }),
    restart: async (env) => {
      if (!storage || !opts.persist) throw new Error('restart() needs testApp({ persist: true })');
      await shutdown();
      await db.close();
      return build(env ? { ...opts, env } : opts, await storage.reopen(), storage);
    },
    close: async () => {
      await shutdown();
      if (storage) {
        await dropAppDatabases(deps);
        await db.close();
        await storage.drop();
      }
    },
  };
}

/** Project databases live beside the test database on the server; tests drop them with it. */
export async function dropAppDatabases(deps: Deps): Promise<void> {
  if (!onPostgres) return;
  const rows = await deps.db.orm.select({ projectId: appDatabases.projectId }).from(appDatabases);
  for (const r of rows) await dropAppDatabase(deps, r.projectId).catch(() => {});
}

export function uniq(prefix = 't'): string {
  return `${prefix}-${crypto.randomBytes(4).toString('hex')}`;
}
