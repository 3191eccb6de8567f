import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Keyring } from '../../src/core/crypto.ts';
import { type Db, openDb } from '../../src/core/db/client.ts';
import { onPostgres, restartableTestDb, testApp } from '../harness.ts';
import { seedProject, seedV1Tenant } from '../seed.ts';

// Crash tests' pieces: storage that outlives a seeding app and the `pier serve` children run on it (PGlite in
// the child's DATA_DIR/db, started from the suite's migrated template; or a PostgreSQL database of its own),
// and a child started on a fixed port and waited for until /healthz answers; for the workflow crash tests, a
// seeded workflow, a v1 caller and a run polled until it ends.

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** Opens the storage the children will use; `drop` removes it (PostgreSQL) at the end. */
export async function crashStore(
  dataDir: string,
): Promise<{ db: Db; databaseUrl?: string; drop(): Promise<void> }> {
  if (onPostgres) {
    const store = await restartableTestDb();
    const db = await store.open();
    return { db, databaseUrl: (db as Db & { url?: string }).url, drop: () => store.drop() };
  }
  const template = process.env.PIER_TEST_PGLITE_TEMPLATE;
  if (template) fs.cpSync(template, path.join(dataDir, 'db'), { recursive: true });
  return { db: await openDb({ dataDir: path.join(dataDir, 'db') }), drop: async () => {} };
}

/** Starts `pier serve` and resolves once it answers /healthz (fails with its stderr tail otherwise). */
export async function startPier(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    cwd: root,
    env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c) => {
    stderr += c;
  });
  const end = Date.now() + 240_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return child;
    if (Date.now() > end || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`pier did not start (exit ${child.exitCode}): ${stderr.slice(-2000)}`);
    }
    await sleep(200);
  }
}

export async function sigkill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((ok) => child.once('exit', ok));
  child.kill('SIGKILL');
  await exited;
}

type Cleanups = (() => Promise<void> | void)[];

/**
 * The workflow crash tests' start: fresh storage (crashStore), a tenant, a project and one workflow seeded by
 * an in-process app that is then closed, and the env a `pier serve` child needs to open the same storage
 * with the same keyring. `env` goes to both the seeding app and the children.
 */
export async function seedCrashWorkflow(
  cleanups: Cleanups,
  prefix: string,
  workflow: Record<string, unknown>,
  env: Record<string, string> = {},
) {
  const secret = crypto.randomBytes(32).toString('base64url');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const store = await crashStore(dataDir);
  cleanups.push(() => store.drop());
  const t = await testApp({
    db: store.db,
    dataDir,
    keyring: new Keyring(Buffer.from(secret, 'base64url')),
    env,
  });
  const a = await seedV1Tenant(t.deps);
  const slug = (await seedProject(t.deps, a.org)).slug;
  const created = await t.v1('POST', '/workflows', a.live, { projectSlug: slug, ...workflow });
  if (created.statusCode !== 201) throw new Error(`workflow not created: ${created.body}`);
  await t.close();
  await store.db.close();
  const childEnv = {
    DATA_DIR: dataDir,
    PIER_SECRET_KEY: secret,
    OUTBOUND_ALLOW: '127.0.0.1/32',
    WORKFLOW_LEASE_MS: '1500',
    ...env,
    ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
  };
  return { liveKey: a.live, slug, workflowId: created.json().id as string, childEnv };
}

export type Answer = { status: number; json: Record<string, any> };

/** Calls a child's v1 API with an API key. */
export function v1At(port: number, key: string) {
  return async (method: string, url: string, body?: unknown): Promise<Answer> => {
    const r = await fetch(`http://127.0.0.1:${port}/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, json: (await r.json()) as Record<string, any> };
  };
}

/** Polls the run until it is finished or `ms` pass; returns it as last read. */
export async function runWhenDone(call: ReturnType<typeof v1At>, runId: string, ms: number) {
  const end = Date.now() + ms;
  for (;;) {
    const run = (await call('GET', `/workflows/runs/${runId}`)).json;
    if (['completed', 'failed', 'cancelled'].includes(run.status) || Date.now() > end) return run;
    await sleep(250);
  }
}
