import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { freePort } from '../src/areas/hosting/runtime/local-driver.ts';
import { packApp } from '../src/cli/deploy/pack.ts';
import { systemClock } from '../src/core/clock.ts';
import type { Keyring } from '../src/core/crypto.ts';
import { dropAppDatabases, openTestDb, type TestApp, testApp } from './harness.ts';
import { seedOrg, seedProject } from './seed.ts';

// Helpers for hosting tests: build app folders from the fixtures, pack, upload and deploy them.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const fixtures = path.join(root, 'test/fixtures/hosting');

/** Copies a package and its dependencies (recursively) from Pier's node_modules into an app's. */
function copyDepTree(name: string, into: string, seen = new Set<string>()): void {
  if (seen.has(name)) return;
  seen.add(name);
  const src = path.join(root, 'node_modules', name);
  if (!fs.existsSync(src)) return; // optional dependency not installed
  fs.cpSync(src, path.join(into, name), { recursive: true, dereference: true });
  const pkg = JSON.parse(fs.readFileSync(path.join(src, 'package.json'), 'utf8'));
  for (const dep of Object.keys(pkg.dependencies ?? {})) copyDepTree(dep, into, seen);
}

let pgModules: string | null = null;
/** node_modules holding `pg` and its dependency tree, built once per test process. */
function pgNodeModules(): string {
  if (!pgModules) {
    pgModules = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pier-pg-')), 'node_modules');
    copyDepTree('pg', pgModules);
  }
  return pgModules;
}

/** A Node app folder: the fixture, its dependencies inside, a version and extra files. */
export function nodeAppDir(version: string, extra: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-app-'));
  fs.cpSync(path.join(fixtures, 'node-app'), dir, { recursive: true });
  fs.cpSync(pgNodeModules(), path.join(dir, 'node_modules'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'version.json'), JSON.stringify({ version }));
  for (const [f, body] of Object.entries(extra)) fs.writeFileSync(path.join(dir, f), body);
  return dir;
}

export async function packDir(dir: string): Promise<Buffer> {
  const { file } = await packApp(dir);
  const buf = fs.readFileSync(file);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  return buf;
}

/** PUTs the artifact to the presigned upload URL (Pier's own /blobs URLs go in through inject). */
export async function upload(
  t: TestApp,
  created: { uploadUrl: string; uploadHeaders: Record<string, string> },
  body: Buffer,
): Promise<number> {
  const url = new URL(created.uploadUrl);
  if (created.uploadUrl.startsWith(t.deps.config.publicUrl)) {
    const res = await t.app.inject({
      method: 'PUT',
      url: url.pathname + url.search,
      headers: created.uploadHeaders,
      payload: body,
    });
    return res.statusCode;
  }
  const res = await fetch(created.uploadUrl, {
    method: 'PUT',
    headers: created.uploadHeaders,
    body: new Uint8Array(body),
  });
  return res.status;
}

/** create → upload → start; returns the start answer (status and body). */
export async function deploy(t: TestApp, token: string, projectSlug: string, artifact: Buffer) {
  const created = await t.call('createDeploymentForCli', { projectSlug }, token);
  if (created.statusCode !== 200) return { created, uploaded: 0, started: created, id: '' };
  const uploaded = await upload(t, created.json(), artifact);
  const id = created.json().deploymentId as string;
  const started = await t.call('startDeploymentForCli', { deploymentId: id }, token);
  return { created, uploaded, started, id };
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

/** Waits until the deployment leaves building/starting; returns its final view. */
export async function settle(t: TestApp, token: string, deploymentId: string, timeoutMs = 30_000) {
  return waitFor(
    `deployment ${deploymentId} to settle`,
    async () => {
      const r = await t.call('getDeploymentForCli', { deploymentId }, token);
      const d = r.json();
      return ['live', 'failed', 'superseded'].includes(d.status) ? d : null;
    },
    timeoutMs,
  );
}

// One keep-alive pool per Host, as a browser keeps one per origin: Node's agent pools by address alone, and a
// connection handed to an app answers 421 for any other hostname (docs/decisions/020-connection-handoff.md).
const agents = new Map<string, http.Agent>();
function agentFor(host: string): http.Agent {
  let a = agents.get(host);
  if (!a) {
    a = new http.Agent({ keepAlive: true, maxSockets: 16 });
    agents.set(host, a);
  }
  return a;
}

export type RouterResponse = {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body's bytes, for binary files. */
  raw: Buffer;
};

/** A request to an app through Pier's router, by Host header (fetch cannot set Host, so plain http). */
export function viaRouter(
  t: TestApp,
  slug: string,
  pathname = '/',
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; host?: string } = {},
): Promise<RouterResponse> {
  const url = new URL(t.url);
  const host = opts.host ?? `${slug}.${t.deps.config.appsDomain}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: pathname,
        method: opts.method ?? 'GET',
        agent: agentFor(host),
        headers: { ...opts.headers, host },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
            raw: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

export type HostedPair = { t: TestApp; apps: { slug: string; host: string }[] };

/**
 * Pier listening with hosting on (apps at `<slug>.apps.test`) and two tenants' apps deployed live from
 * `appDir(name)`, one organization each (the free plan allows one app per organization): set up before the
 * file's tests, torn down after. Two deploys, the first preparing the embedded databases' template: slow on a
 * loaded machine.
 */
export function hostedPair(appDir: (name: string) => string, env: Record<string, string> = {}): HostedPair {
  const pair = { apps: [] } as unknown as HostedPair;
  let db: Awaited<ReturnType<typeof openTestDb>> | undefined;
  beforeAll(async () => {
    db = await openTestDb();
    pair.t = await testApp({
      listen: true,
      db: db.db,
      clock: systemClock,
      hosting: true,
      env: {
        APPS_DOMAIN: 'apps.test',
        APP_HEALTH_TIMEOUT_MS: '8000',
        ...env,
        ...(db.url ? { DATABASE_URL: db.url } : {}),
      },
    });
    for (const name of ['app-a', 'app-b']) {
      const { org, owner } = await seedOrg(pair.t.deps);
      const p = await seedProject(pair.t.deps, org);
      const { id } = await deploy(pair.t, owner.token, p.slug, await packDir(appDir(name)));
      // The deployment itself on failure (its errorMessage says why), not only its status.
      const d = await settle(pair.t, owner.token, id, 180_000);
      expect(d.status, JSON.stringify(d)).toBe('live');
      pair.apps.push({ slug: p.slug, host: `${p.slug}.apps.test` });
    }
  }, 240_000);
  afterAll(async () => {
    await pair.t?.close();
    if (pair.t) await dropAppDatabases(pair.t.deps);
    await db?.db.close();
    await db?.drop();
  });
  return pair;
}

export type TestDb = Awaited<ReturnType<typeof openTestDb>>;

/**
 * Pier with hosting on (apps at `<slug>.apps.test`), listening on `port` and knowing it as its public
 * address, so presigned upload URLs work for the CLI too. The same port, data folder, database and keyring
 * make a restart: what a process restart keeps.
 */
export function hostingApp(o: {
  port: number;
  db: TestDb;
  dataDir: string;
  keyring?: Keyring;
  env?: Record<string, string>;
}): Promise<TestApp> {
  return testApp({
    listen: o.port,
    db: o.db.db,
    dataDir: o.dataDir,
    keyring: o.keyring,
    clock: systemClock,
    hosting: true,
    env: {
      PUBLIC_URL: `http://127.0.0.1:${o.port}`,
      APPS_DOMAIN: 'apps.test',
      APP_HEALTH_TIMEOUT_MS: '8000',
      ...o.env,
      ...(o.db.url ? { DATABASE_URL: o.db.url } : {}),
    },
  });
}

/** Stops a hostingApp and removes what it made: its apps' databases, its own database, its data folder. */
export async function closeHostingApp(t: TestApp | undefined, db: TestDb | undefined, dataDir: string) {
  await t?.close();
  if (t) await dropAppDatabases(t.deps);
  await db?.db.close();
  await db?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

/**
 * One hostingApp for the whole test file, started before its tests (`started` receives it) and removed after.
 * Returns its data folder.
 */
export function hostingAppForFile(
  name: string,
  started: (t: TestApp) => void,
  env: Record<string, string> = {},
): string {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `pier-e2e-${name}-`));
  let t: TestApp | undefined;
  let db: TestDb | undefined;
  beforeAll(async () => {
    const port = await freePort();
    db = await openTestDb();
    t = await hostingApp({ port, db, dataDir, env });
    started(t);
  });
  // Stopping its apps and dropping their databases takes long on a loaded machine.
  afterAll(() => closeHostingApp(t, db, dataDir), 180_000);
  return dataDir;
}
