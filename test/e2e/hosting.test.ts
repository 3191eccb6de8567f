import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/areas/hosting/runtime/local-driver.ts';
import { Keyring } from '../../src/core/crypto.ts';
import { openTestDb, type TestApp, uniq } from '../harness.ts';
import {
  closeHostingApp,
  deploy,
  hostingApp,
  nodeAppDir,
  packDir,
  settle,
  type TestDb,
  viaRouter,
  waitFor,
} from '../hosting.ts';
import { seedOrg, seedProject } from '../seed.ts';
import { removeScratchHomes } from './cli-helpers.ts';

// Whole-system hosting of Node apps on real processes: one Pier per file (restarted once), apps deployed
// through the function API, reached through the router by Host header. Static sites, refused artifacts,
// scopes and `pier deploy` are hosting-static.test.ts.

let t: TestApp;
let db: TestDb;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-e2e-hosting-'));
const keyring = Keyring.random();

let port = 0;
const start = () => hostingApp({ port, db, dataDir, keyring });

beforeAll(async () => {
  port = await freePort();
  db = await openTestDb();
  t = await start();
});
afterAll(async () => {
  removeScratchHomes();
  await closeHostingApp(t, db, dataDir);
});
/** Fires requests back to back until stop() and counts the ones that failed. */
function requestLoop(slug: string, pathname = '/') {
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const seen = new Set<string>();
  const done = (async () => {
    while (running) {
      try {
        const r = await viaRouter(t, slug, pathname);
        if (r.status === 200) {
          ok++;
          seen.add(r.body);
        } else failures.push(`${r.status} ${r.body.slice(0, 80)}`);
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  })();
  return {
    seen,
    stop: async () => {
      running = false;
      await done;
      return { ok, failures };
    },
  };
}

async function json(slug: string, pathname = '/') {
  const r = await viaRouter(t, slug, pathname);
  expect(r.status).toBe(200);
  return JSON.parse(r.body);
}

/** The app's own process as the host sees it (inside its sandbox it is pid 2). */
async function appPid(slug: string): Promise<number> {
  const inst = t.runtime!.supervisor.lookup(slug);
  if (inst?.kind !== 'node') throw new Error(`no node app runs for ${slug}`);
  const [pid] = await inst.proc.hostPids();
  return pid;
}

describe('hosting a Node app', () => {
  let owner: { token: string };
  let slug: string;

  it('deploys, reads its secret and DATABASE_URL, writes rows, streams, upgrades', async () => {
    const s = await seedOrg(t.deps);
    owner = s.owner;
    const p = await seedProject(t.deps, s.org, uniq('node'));
    slug = p.slug;
    expect(p.status).toBe('ready');
    await t.call('setSecretForCli', { projectSlug: slug, key: 'GREETING', value: 'one' }, owner.token);

    const { started, id } = await deploy(t, owner.token, slug, await packDir(nodeAppDir('1')));
    expect(started.statusCode).toBe(200);
    expect(started.json()).toMatchObject({
      status: 'building',
      appType: 'node',
      url: `http://${slug}.apps.test`,
    });
    const d = await settle(t, owner.token, id, 110_000);
    expect(d).toMatchObject({ status: 'live' });
    expect(d.liveAt).toBeTruthy();

    expect(await json(slug)).toMatchObject({ version: '1', greeting: 'one' });
    expect((await json(slug, '/db')).visits).toBe(1);
    expect((await json(slug, '/db')).visits).toBe(2);

    const env = await json(slug, '/env');
    expect(env.nodeEnv).toBe('production');
    const allowed = [
      'DATABASE_URL',
      'GREETING',
      'HOME',
      'HOST',
      'LANG',
      'NODE_ENV',
      // The heap flag under the plan's memory limit, and the app's writable folder in its sandbox.
      'NODE_OPTIONS',
      'PIER_APP_DATA',
      // The host's CA bundle (bound read-only), for TLS through a proxy the operator trusts.
      'NODE_EXTRA_CA_CERTS',
      // The Unix socket its server also listens on (net shim, decision 066): Pier's way in to its network.
      'PIER_APP_SOCKET',
      'PATH',
      'PORT',
      'PWD',
      'SHLVL',
      '_',
    ];
    expect(env.keys.filter((k: string) => !allowed.includes(k))).toEqual([]);

    const headers = await json(slug, '/headers');
    expect(headers['x-forwarded-host']).toBe(`${slug}.apps.test`);
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(headers['x-forwarded-for']).toContain('127.0.0.1');

    const stream = await viaRouter(t, slug, '/stream');
    expect(stream.body).toBe('chunk 0\nchunk 1\nchunk 2\n');
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    const echo = await viaRouter(t, slug, '/echo', { method: 'POST', body: big });
    expect(echo.body.length).toBe(big.length);

    // A WebSocket upgrade through the router.
    const url = new URL(t.url);
    const frame = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(Number(url.port), url.hostname, () =>
        sock.write(
          `GET /ws HTTP/1.1\r\nHost: ${slug}.apps.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
        ),
      );
      let buf = '';
      sock.on('data', (c) => {
        buf += c.toString('latin1');
        if (buf.includes('hello from')) {
          sock.destroy();
          resolve(buf);
        }
      });
      sock.on('error', reject);
      setTimeout(() => reject(new Error('no websocket frame')), 5000).unref();
    });
    expect(frame).toMatch(/^HTTP\/1\.1 101/);
    expect(frame).toContain('hello from 1');

    const logs = await waitFor('app logs', async () => {
      const r = await t.call('getAppLogsForCli', { projectSlug: slug }, owner.token);
      const lines = r.json().lines as { line: string }[];
      return lines.some((l) => l.line.startsWith('listening on')) ? lines : null;
    });
    expect(logs.at(-1)).toBeTruthy();
    // The first deploy also prepares the embedded databases' template: slow on a loaded machine.
  }, 120_000);

  it('rolls a secret change out within 10 s with no failed request and no deploy', async () => {
    const before = await json(slug);
    const loop = requestLoop(slug);
    const t0 = Date.now();
    await t.call('setSecretForCli', { projectSlug: slug, key: 'GREETING', value: 'two' }, owner.token);
    await waitFor('the new greeting', async () => (await json(slug)).greeting === 'two', 10_000);
    const took = Date.now() - t0;
    await t.call('removeSecretForCli', { projectSlug: slug, key: 'GREETING' }, owner.token);
    await waitFor('the greeting to go', async () => (await json(slug)).greeting === null, 10_000);
    const { ok, failures } = await loop.stop();
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(10);
    expect(took).toBeLessThan(10_000);
    expect((await json(slug)).instance).not.toBe(before.instance);
    const list = await t.call('listDeploymentsForCli', { projectSlug: slug }, owner.token);
    expect(list.json()).toHaveLength(1);
  });

  it('keeps the old version serving when a deploy fails, and switches with no failed request', async () => {
    const broken = nodeAppDir('2', {
      'pier.json': JSON.stringify({
        start: 'node -e "console.error(\'boom: missing config\'); process.exit(1)"',
      }),
    });
    const loop = requestLoop(slug);
    const bad = await deploy(t, owner.token, slug, await packDir(broken));
    expect(bad.started.statusCode).toBe(200);
    const failed = await settle(t, owner.token, bad.id);
    expect(failed.status).toBe('failed');
    expect(failed.errorMessage).toMatch(/exited during start-up \(code 1\)/);
    expect((await json(slug)).version).toBe('1');
    await waitFor('the failure in the logs', async () => {
      const logs = await t.call('getAppLogsForCli', { projectSlug: slug, limit: 20 }, owner.token);
      return logs.json().lines.some((l: { line: string }) => l.line === 'boom: missing config');
    });

    const good = await deploy(t, owner.token, slug, await packDir(nodeAppDir('3')));
    expect((await settle(t, owner.token, good.id)).status).toBe('live');
    await waitFor('version 3', async () => (await json(slug)).version === '3');
    const { failures } = await loop.stop();
    expect(failures).toEqual([]);
    const list = (await t.call('listDeploymentsForCli', { projectSlug: slug }, owner.token)).json();
    expect(list.map((d: { status: string }) => d.status)).toEqual(['live', 'failed', 'superseded']);
    // The database survived the versions.
    expect((await json(slug, '/db')).visits).toBe(3);
  });

  it('restarts a crashed app', async () => {
    const { instance } = await json(slug);
    process.kill(await appPid(slug), 'SIGKILL');
    const back = await waitFor('the app to come back', async () => {
      const r = await viaRouter(t, slug);
      return r.status === 200 && JSON.parse(r.body).instance !== instance ? JSON.parse(r.body) : null;
    });
    expect(back.version).toBe('3');
    await waitFor('the crash in the logs', async () => {
      const logs = (await t.call('getAppLogsForCli', { projectSlug: slug }, owner.token)).json();
      return logs.lines.some((l: { line: string }) => /the app exited .*; restarting in/.test(l.line));
    });
  });

  it('brings live apps back after Pier restarts, a rollback from the build it runs', async () => {
    // Live is a rollback to version 1: it runs version 1's kept folder, and comes back from it.
    const rb = await t.call('rollbackDeploymentForCli', { projectSlug: slug }, owner.token);
    expect(rb.statusCode, rb.body).toBe(200);
    expect((await settle(t, owner.token, rb.json().id)).status).toBe('live');
    await waitFor('version 1', async () => (await json(slug)).version === '1');
    const pid = await appPid(slug);
    await t.close();
    expect(() => process.kill(pid, 0)).toThrow(); // stopped with Pier
    t = await start();
    await t.runtime!.recovered;
    expect(await json(slug)).toMatchObject({ version: '1', greeting: null });
    expect((await json(slug, '/db')).visits).toBe(4);
  });

  it('answers 404 for unknown slugs, other tenants and Pier routes on app hostnames', async () => {
    const unknown = await viaRouter(t, 'no-such-app', '/api/fn/whoamiForCli', { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/text\/html/);
    expect(unknown.body).toContain('No app here');
    const s = await seedOrg(t.deps);
    const undeployed = await seedProject(t.deps, s.org);
    expect((await viaRouter(t, undeployed.slug, '/healthz')).status).toBe(404);

    const other = await seedOrg(t.deps);
    const deps = await t.call('listDeploymentsForCli', { projectSlug: slug }, other.owner.token);
    expect(deps.json().error.code).toBe('PROJECT_NOT_FOUND');
    const [latest] = (await t.call('listDeploymentsForCli', { projectSlug: slug }, owner.token)).json();
    const got = await t.call('getDeploymentForCli', { deploymentId: latest.id }, other.owner.token);
    expect(got.statusCode).toBe(404);
    expect(got.json().error.code).toBe('DEPLOYMENT_NOT_FOUND');
    const start = await t.call('startDeploymentForCli', { deploymentId: latest.id }, other.owner.token);
    expect(start.statusCode).toBe(404);
    const logs = await t.call('getAppLogsForCli', { projectSlug: slug }, other.owner.token);
    expect(logs.statusCode).toBe(404);
    const create = await t.call('createDeploymentForCli', { projectSlug: slug }, other.owner.token);
    expect(create.statusCode).toBe(404);
  });
});
