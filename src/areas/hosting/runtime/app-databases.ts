import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { randomBase62 } from '../../../core/crypto.ts';
import type { Deps } from '../../../deps.ts';
import { appDatabases } from './tables.ts';

// Each project gets its own database. With DATABASE_URL: a database and a login role of its own on the same
// PostgreSQL server (no superuser, no createdb/createrole, CONNECT revoked from PUBLIC). Embedded: its own
// PGlite data folder, served over the Postgres wire protocol on a loopback port while the app runs, so the
// app reads DATABASE_URL the same way in both modes.

export function projectDir(deps: Deps, projectId: string): string {
  return path.join(deps.config.dataDir, 'apps', projectId);
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

type Served = { db: PGlite; server: PGLiteSocketServer; port: number };

/** The PGlite databases this node serves to its apps, one loopback port each. */
export class AppDbServers {
  readonly #served = new Map<string, Promise<Served>>();
  readonly #deps: Deps;
  constructor(deps: Deps) {
    this.#deps = deps;
  }

  /** The DATABASE_URL an app of this project should use (opens the PGlite server when needed). */
  async urlFor(projectId: string): Promise<string> {
    const [row] = await this.#deps.db.orm
      .select()
      .from(appDatabases)
      .where(eq(appDatabases.projectId, projectId));
    if (!row) throw new Error('The project has no database; it was not provisioned.');
    const password = this.#deps.keyring.decrypt(row.passwordEnc);
    if (row.kind === 'postgres') {
      const url = new URL(this.#deps.config.databaseUrl!);
      url.username = row.roleName;
      url.password = password;
      url.pathname = `/${row.dbName}`;
      return url.toString();
    }
    const { port } = await this.#open(projectId);
    // The socket server does not check passwords; it listens on loopback only (see docs/operations.md).
    return `postgres://${row.roleName}:${password}@127.0.0.1:${port}/postgres?sslmode=disable`;
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
        const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 64 });
        await server.start();
        const port = Number(server.getServerConn().split(':').pop());
        return { db, server, port };
      })();
      p.catch(() => this.#served.delete(projectId));
      this.#served.set(projectId, p);
    }
    return p;
  }

  async close(projectId: string): Promise<void> {
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
    await Promise.all([...this.#served.keys()].map((id) => this.close(id)));
  }
}
