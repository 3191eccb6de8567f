import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Db, openDb } from '../../src/core/db/client.ts';
import { onPostgres, restartableTestDb } from '../harness.ts';

// Crash tests' pieces: storage that outlives a seeding app and the `pier serve` children run on it (PGlite in
// the child's DATA_DIR/db, started from the suite's migrated template; or a PostgreSQL database of its own),
// and a child started on a fixed port and waited for until /healthz answers.

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
