import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { randomBase62 } from '../../../core/crypto.ts';
import type { Deps } from '../../../deps.ts';
import { DbGate } from './db-gate.ts';
import { SANDBOX_RUN } from './sandbox.ts';
import { appDatabases } from './tables.ts';

// Each project gets its own database. With DATABASE_URL: a database and a login role of its own on the same
// PostgreSQL server (no superuser, no createdb/createrole, CONNECT revoked from PUBLIC). Embedded: its own
// PGlite data folder, served over the Postgres wire protocol while the app runs, so the app reads DATABASE_URL
// the same way in both modes. Either way the app reaches it only through its project's database socket
// (db-gate.ts, decision 067), which checks the project's password and pins its role and database.

export function projectDir(deps: Deps, projectId: string): string {
  return path.join(deps.config.dataDir, 'apps', projectId);
}

/** The project's socket folder (bound at /run/pier in its sandbox): its app's socket and its database socket. */
export function projectRunDir(deps: Deps, projectId: string): string {
  return path.join(projectDir(deps, projectId), 'run');
}

function names(projectId: string): string {
  return `pier_app_${projectId.replace(/-/g, '').slice(0, 20)}`;
}

function adminClient(deps: Deps): pg.Client {
  const c = new pg.Client({ connectionString: deps.config.databaseUrl });
  c.on('error', () => {});
  return c;
}

/** Creates the project's database (idempotent); throws with a reason on failure. */
export async function provisionAppDatabase(deps: Deps, projectId: string): Promise<void> {
  const [existing] = await deps.db.orm
    .select()
    .from(appDatabases)
    .where(eq(appDatabases.projectId, projectId));
  if (existing) return;
  const name = names(projectId);
  // base62 only, so it is safe inside a SQL literal (CREATE ROLE takes no parameters).
  const password = randomBase62(32);
  if (deps.config.databaseUrl) {
    const c = adminClient(deps);
    await c.connect();
    try {
      const id = pg.escapeIdentifier(name);
      await c.query(
        `CREATE ROLE ${id} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD '${password}'`,
      );
      await c.query(`CREATE DATABASE ${id} OWNER ${id}`);
      await c.query(`REVOKE ALL ON DATABASE ${id} FROM PUBLIC`);
      // Nor may apps connect to Pier's own database (PUBLIC has CONNECT on every new database by default).
      // Pier's user owns it, so it keeps its own access; when it does not own it, that is the operator's call.
      await c
        .query('SELECT current_database() AS name')
        .then(({ rows }) =>
          c.query(`REVOKE CONNECT ON DATABASE ${pg.escapeIdentifier(rows[0].name)} FROM PUBLIC`),
        )
        .catch(() => {});
    } finally {
      await c.end().catch(() => {});
    }
    // The app's role owns its public schema whatever template1 says (older clusters give it to postgres).
    const url = new URL(deps.config.databaseUrl);
    url.pathname = `/${name}`;
    const inDb = new pg.Client({ connectionString: url.toString() });
    inDb.on('error', () => {});
    await inDb.connect();
    try {
      await inDb.query(`ALTER SCHEMA public OWNER TO ${pg.escapeIdentifier(name)}`);
      await inDb.query('REVOKE ALL ON SCHEMA public FROM PUBLIC');
    } finally {
      await inDb.end().catch(() => {});
    }
  } else {
    fs.mkdirSync(path.join(projectDir(deps, projectId), 'pgdata'), { recursive: true });
  }
  await deps.db.orm.insert(appDatabases).values({
    projectId,
    kind: deps.config.databaseUrl ? 'postgres' : 'pglite',
    dbName: name,
    roleName: name,
    passwordEnc: deps.keyring.encrypt(password),
    createdAt: deps.clock.now(),
  });
}

/** Drops the project's database and role (PostgreSQL) or its data folder (PGlite; close its server first). */
export async function dropAppDatabase(deps: Deps, projectId: string): Promise<void> {
  const [row] = await deps.db.orm.select().from(appDatabases).where(eq(appDatabases.projectId, projectId));
  if (!row) return;
  if (row.kind === 'postgres' && deps.config.databaseUrl) {
    const c = adminClient(deps);
    await c.connect();
    try {
      const id = pg.escapeIdentifier(row.dbName);
      await c.query(`DROP DATABASE IF EXISTS ${id} WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(row.roleName)}`);
    } finally {
      await c.end().catch(() => {});
    }
  } else {
    fs.rmSync(path.join(projectDir(deps, projectId), 'pgdata'), { recursive: true, force: true });
  }
  await deps.db.orm.delete(appDatabases).where(eq(appDatabases.projectId, projectId));
}

type Served = { db: PGlite; server: PGLiteSocketServer; socket: string };

/** The PGlite databases this node serves to its apps, one loopback port each. */
export class AppDbServers {
  readonly #served = new Map<string, Promise<Served>>();
  readonly #deps: Deps;
  constructor(deps: Deps) {
    this.#deps = deps;
  }

  readonly #gates = new Map<string, Promise<DbGate>>();

  /**
   * The DATABASE_URL an app of this project should use: its database socket (opened when needed, with the
   * PGlite server behind it), by the path the app sees — /run/pier/db in its sandbox, the host path without.
   */
  async urlFor(projectId: string, opts: { sandboxed: boolean } = { sandboxed: true }): Promise<string> {
    const [row] = await this.#deps.db.orm
      .select()
      .from(appDatabases)
      .where(eq(appDatabases.projectId, projectId));
    if (!row) throw new Error('The project has no database; it was not provisioned.');
    const password = this.#deps.keyring.decrypt(row.passwordEnc);
    // PGlite has one database (postgres); the app still names its own, so no two projects' URLs look alike.
    const database = row.dbName;
    let gate = this.#gates.get(projectId);
    if (!gate) {
      gate = this.#openGate(projectId, row.kind, row.roleName, database, password);
      gate.catch(() => this.#gates.delete(projectId));
      this.#gates.set(projectId, gate);
    }
    await gate;
    const dir = opts.sandboxed ? `${SANDBOX_RUN}/db` : path.join(projectRunDir(this.#deps, projectId), 'db');
    const url = new URL(`postgres://localhost:5432/${database}`);
    url.username = row.roleName;
    url.password = password;
    url.searchParams.set('host', dir);
    url.searchParams.set('sslmode', 'disable');
    return url.toString();
  }

  async #openGate(
    projectId: string,
    kind: string,
    role: string,
    database: string,
    password: string,
  ): Promise<DbGate> {
    const socketPath = path.join(projectRunDir(this.#deps, projectId), 'db', '.s.PGSQL.5432');
    if (kind === 'postgres') {
      const pgUrl = new URL(this.#deps.config.databaseUrl!);
      const host = pgUrl.searchParams.get('host') ?? (pgUrl.hostname || '127.0.0.1');
      const port = Number(pgUrl.port || 5432);
      return DbGate.listen({
        socketPath,
        role,
        database,
        password,
        upstream: () =>
          host.startsWith('/')
            ? net.connect(path.join(host, `.s.PGSQL.${port}`))
            : net.connect(port, host.replace(/^\[|\]$/g, '')),
      });
    }
    const { socket } = await this.#open(projectId);
    return DbGate.listen({
      socketPath,
      role,
      database,
      upstreamDatabase: 'postgres',
      upstreamUser: 'postgres',
      password,
      upstream: () => net.connect(socket),
    });
  }

  #template: Promise<string> | null = null;

  /**
   * A freshly initialised, closed PGlite data folder that new project databases are copied from: initdb in
   * WASM takes seconds (much more on a busy machine), a copy takes milliseconds. Warmed when the runtime starts.
   */
  template(): Promise<string> {
    this.#template ??= (async () => {
      const dir = path.join(this.#deps.config.dataDir, 'apps', '.pglite-template');
      if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return dir;
      const tmp = `${dir}.${process.pid}.tmp`;
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.mkdirSync(path.dirname(tmp), { recursive: true });
      await this.#initInWorker(tmp);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
      return dir;
    })();
    this.#template.catch(() => {
      this.#template = null;
    });
    return this.#template;
  }

  #worker: Worker | null = null;

  /** initdb in WASM blocks its thread for seconds, so it runs in a worker thread, not on Pier's event loop. */
  #initInWorker(dataDir: string): Promise<void> {
    const code =
      'const { workerData } = require("node:worker_threads");' +
      'import(workerData.module).then(async ({ PGlite }) => {' +
      '  const db = await PGlite.create({ dataDir: workerData.dataDir }); await db.close(); });';
    return new Promise((resolve, reject) => {
      const w = new Worker(code, {
        eval: true,
        workerData: { module: import.meta.resolve('@electric-sql/pglite'), dataDir },
      });
      this.#worker = w;
      w.once('error', reject);
      w.once('exit', (code) => {
        this.#worker = null;
        if (code === 0) resolve();
        else reject(new Error(`initialising the PGlite template exited with code ${code}`));
      });
    });
  }

  #open(projectId: string): Promise<Served> {
    let p = this.#served.get(projectId);
    if (!p) {
      p = (async () => {
        const dir = path.join(projectDir(this.#deps, projectId), 'pgdata');
        if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
          fs.rmSync(dir, { recursive: true, force: true });
          fs.cpSync(await this.template(), dir, { recursive: true });
        }
        const db = await PGlite.create({ dataDir: dir });
        // On a Unix socket in the project's folder, outside every sandbox: it checks no password, so only the
        // project's database socket (db-gate.ts) connects to it.
        const socket = path.join(projectDir(this.#deps, projectId), 'pglite.sock');
        fs.rmSync(socket, { force: true });
        const server = new PGLiteSocketServer({ db, path: socket, maxConnections: 64 });
        await server.start();
        fs.chmodSync(socket, 0o600);
        return { db, server, socket };
      })();
      p.catch(() => this.#served.delete(projectId));
      this.#served.set(projectId, p);
    }
    return p;
  }

  async close(projectId: string): Promise<void> {
    const g = this.#gates.get(projectId);
    this.#gates.delete(projectId);
    await (await g?.catch(() => null))?.close();
    const p = this.#served.get(projectId);
    if (!p) return;
    this.#served.delete(projectId);
    const s = await p.catch(() => null);
    if (!s) return;
    await s.server.stop().catch(() => {});
    await s.db.close().catch(() => {});
  }

  async closeAll(): Promise<void> {
    // A template still being initialised is abandoned (its temporary folder is redone next time).
    await this.#worker?.terminate();
    await this.#template?.catch(() => {});
    const ids = new Set([...this.#served.keys(), ...this.#gates.keys()]);
    await Promise.all([...ids].map((id) => this.close(id)));
  }
}
