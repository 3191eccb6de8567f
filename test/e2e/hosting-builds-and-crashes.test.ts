import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostingRuntime } from '../../src/areas/hosting/index.ts';
import type { TestApp } from '../harness.ts';
import { deploy, fixtures, hostingAppForFile, packDir, settle, viaRouter, waitFor } from '../hosting.ts';
import { seedOrg, seedProject } from '../seed.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// Builds from source and crash loops (issue 15): an artifact with package.json and package-lock.json and no node_modules is
// installed from the npm registry and built in the app's sandbox; a broken lockfile fails the deployment with
// npm's own words and the live version keeps serving.

let t: TestApp;
const dataDir = hostingAppForFile('build', (app) => {
  t = app;
});

function sourceApp(version: string, edit?: (dir: string) => void): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-source-app-'));
  fs.cpSync(path.join(fixtures, 'source-app'), dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'version.json'), JSON.stringify({ version }));
  edit?.(dir);
  return dir;
}

const hosting = () => hostingRuntime(t.deps)!;
const dataDir0 = () => dataDir;

async function logLines(token: string, slug: string): Promise<string[]> {
  const r = await t.call('getAppLogsForCli', { projectSlug: slug, limit: 500 }, token);
  return (r.json().lines as { line: string }[]).map((l) => l.line);
}

afterAll(() => removeScratchHomes());

describe('building a source-only artifact', () => {
  let token = '';
  let slug = '';

  it('installs its dependency, runs its build, and serves it; the second build reuses the cache', async () => {
    const s = await seedOrg(t.deps);
    token = s.owner.token;
    slug = (await seedProject(t.deps, s.org)).slug;
    const times: number[] = [];
    for (const version of ['1', '2']) {
      const { started, id } = await deploy(t, token, slug, await packDir(sourceApp(version)));
      expect(started.statusCode).toBe(200);
      const d = await settle(t, token, id, 240_000);
      expect(d.status, d.errorMessage).toBe('live');
      // A kept-alive connection may still be with the old version for one more answer (it drains).
      const body = await waitFor(`version ${version}`, async () => {
        const b = JSON.parse((await viaRouter(t, slug)).body);
        return b.version === version ? b : null;
      });
      expect(body).toEqual({ built: true, version, oneHour: 3_600_000 });
      const lines = await waitFor('the build log', async () => {
        const all = await logLines(token, slug);
        return all.filter((l) => /^build finished in/.test(l)).length === times.length + 1 ? all : null;
      });
      expect(lines).toContain('> npm run build');
      expect(lines).toContain('built dist/server.js');
      times.push(
        Number(
          /build finished in ([\d.]+) s/.exec(lines.findLast((l) => l.startsWith('build finished'))!)![1],
        ),
      );
    }
    // Figures for docs/benchmarks.md; the second install comes from the project's cache.
    console.log(`build from source: first ${times[0]} s, second (same lockfile) ${times[1]} s`);
    const cache = fs.readdirSync(path.join(dataDir, 'apps'), { recursive: true }) as string[];
    expect(cache.some((p) => p.includes('npm-cache') && p.includes('_cacache'))).toBe(true);
  }, 300_000);

  it("fails a deployment whose lockfile is broken with npm's message, and the live version keeps serving", async () => {
    const broken = sourceApp('3', (dir) => {
      const lock = JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8'));
      lock.packages['node_modules/ms'].version = '0.0.0-does-not-exist';
      lock.packages['node_modules/ms'].integrity = 'sha512-AAAA';
      fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify(lock));
    });
    const { id } = await deploy(t, token, slug, await packDir(broken));
    const d = await settle(t, token, id, 240_000);
    expect(d.status).toBe('failed');
    expect(d.errorMessage).toMatch(/The build failed \(exit code \d+\)/);
    expect(d.errorMessage).toMatch(/npm error/);
    const r = await viaRouter(t, slug);
    expect(JSON.parse(r.body).version).toBe('2');
  }, 300_000);

  it('`pier deploy` exits non-zero when the build fails, with the reason and the last lines on stderr', async () => {
    const broken = sourceApp('5', (dir) => fs.writeFileSync(path.join(dir, 'build.js'), 'process.exit(3)'));
    const o = { url: t.url, home: scratchHome(), env: { PIER_TOKEN: token } };
    const run = await pier(['deploy', broken, '--project', slug], o);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Deployment failed: The build failed \(exit code 3\)/);
    expect(run.stderr).toMatch(/Last log lines:/);
    expect(run.stdout).toBe('');
    expect(JSON.parse((await viaRouter(t, slug)).body).version).toBe('2');
  }, 300_000);

  it('refuses a Yarn lockfile at once, saying it is not supported yet', async () => {
    const yarn = sourceApp('4', (dir) => {
      fs.rmSync(path.join(dir, 'package-lock.json'));
      fs.writeFileSync(path.join(dir, 'yarn.lock'), '# yarn lockfile v1\n');
    });
    const { started } = await deploy(t, token, slug, await packDir(yarn));
    expect(started.statusCode).toBe(400);
    expect(started.json().error.message).toMatch(/yarn.lock: building with Yarn is not supported yet/);
  });

  it('builds a pnpm app with pnpm fetched from the npm registry: dev dependencies for the build, pruned after', async () => {
    const s = await seedOrg(t.deps);
    const pslug = (await seedProject(t.deps, s.org)).slug;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-pnpm-app-'));
    fs.cpSync(path.join(fixtures, 'apps/pnpm-node'), dir, { recursive: true });
    const { started, id } = await deploy(t, s.owner.token, pslug, await packDir(dir));
    expect(started.statusCode, started.body).toBe(200);
    const d = await settle(t, s.owner.token, id, 240_000);
    expect(d.status, d.errorMessage).toBe('live');
    // The build used a devDependency; the pruned app still has its dependency at run time.
    expect(JSON.parse((await viaRouter(t, pslug)).body)).toEqual({
      built: true,
      oneHour: 3_600_000,
      message: null,
    });
    const lines = await logLines(s.owner.token, pslug);
    expect(lines).toContain(
      'detected node-start: install: pnpm install (pnpm@12.26.0, from the npm registry); build: npm run build; start: node dist/server.js',
    );
    expect(lines).toContain('built dist/server.js with pnpm');
    expect(lines).toContain('> npm exec --yes pnpm@12.26.0 -- prune --prod');
    fs.rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it('`pier deploy` streams the build live, with a progress line of its steps', async () => {
    const o = { url: t.url, home: scratchHome(), env: { PIER_TOKEN: token } };
    const run = await pier(['deploy', sourceApp('6'), '--project', slug], o);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Live at /);
    // Not a terminal: each step is printed once, in order, between the build's own lines.
    const steps = run.stderr.split('\n').filter((l) => /^\[[#.]+\] \d\/6 /.test(l));
    expect(steps.map((l) => l.replace(/^\[[#.]+\] /, ''))).toEqual([
      '1/6 upload',
      '2/6 npm ci',
      '3/6 build',
      '4/6 prune',
      '5/6 start',
      '6/6 healthy',
    ]);
    const err = run.stderr;
    expect(err).toContain('  | > npm run build');
    expect(err).toContain('  | built dist/server.js');
    expect(err.indexOf('2/6 npm ci')).toBeLessThan(err.indexOf('  | built dist/server.js'));
    expect(err.indexOf('  | built dist/server.js')).toBeLessThan(err.indexOf('6/6 healthy'));
    await waitFor('version 6', async () => JSON.parse((await viaRouter(t, slug)).body).version === '6');
  }, 300_000);
});

/** A source-only app without dependencies whose server runs `afterFirst` once it has answered its first request. */
function afterFirstAnswer(name: string, afterFirst: string): string {
  return sourceApp(name, (d) => {
    fs.rmSync(path.join(d, 'package-lock.json'));
    fs.writeFileSync(
      path.join(d, 'package.json'),
      JSON.stringify({ name, private: true, scripts: { start: 'node crash.js' } }),
    );
    fs.writeFileSync(
      path.join(d, 'crash.js'),
      // Every start passes its health check (the first answer), then fails.
      "let armed = false; require('node:http').createServer((q, r) => { r.end('ok');" +
        ` if (!armed) { armed = true; setTimeout(() => { ${afterFirst} }, 1500); } })` +
        ".listen(Number(process.env.PORT), '127.0.0.1');",
    );
  });
}

async function deploymentOf(token: string, id: string) {
  return (await t.call('getDeploymentForCli', { deploymentId: id }, token)).json();
}

describe('a crash loop', () => {
  it('ends the deployment as crashed with the reason and stops restarting; `pier restart` brings it back', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const { id } = await deploy(
      t,
      owner.token,
      p.slug,
      await packDir(afterFirstAnswer('crashy', 'process.exit(7)')),
    );
    expect((await settle(t, owner.token, id, 60_000)).status).toBe('live');
    const d = await waitFor(
      'the deployment to end as crashed',
      async () => {
        const r = await deploymentOf(owner.token, id);
        return r.status === 'crashed' ? r : null;
      },
      90_000,
      200,
    );
    expect(d.errorMessage).toMatch(
      /^Crashed: the app exited 5 times within 10 minutes \(last: code 7\); restarts stopped\./,
    );
    // Nothing serves it any more, and no restart is pending.
    // The log line is written in the next batch (app-logs.ts), a moment after the status.
    const logs = await waitFor('the crash in the log', async () => {
      const all = await logLines(owner.token, p.slug);
      return all.at(-1)?.startsWith('Crashed: ') ? all : null;
    });
    expect(logs.filter((l) => /the app exited .*; restarting in/.test(l))).toHaveLength(4);
    expect(hosting().supervisor.lookup(p.slug)).toBeNull();

    // `pier restart` starts that version again: live, reason cleared (until it crashes again).
    const o = { url: t.url, home: scratchHome(), env: { PIER_TOKEN: owner.token } };
    const run = await pier(['restart', '--project', p.slug], o);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Live at /);
    const back = await deploymentOf(owner.token, id);
    expect(back.status === 'live' || back.status === 'crashed').toBe(true);
    const list = (await t.call('listDeploymentsForCli', { projectSlug: p.slug }, owner.token)).json();
    expect(list).toHaveLength(1);
    await t.call('destroyProjectForCli', { slug: p.slug }, owner.token);
  }, 180_000);

  it('says "out of memory" in `pier logs` and on the deployment when an app allocates past its limit', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    // Buffers live outside the JavaScript heap: only the memory limit (512 MB on the free plan) stops them.
    const hog = 'const keep = []; setInterval(() => keep.push(Buffer.alloc(32 * 1024 * 1024, 1)), 5);';
    const { id } = await deploy(t, owner.token, p.slug, await packDir(afterFirstAnswer('hog', hog)));
    expect((await settle(t, owner.token, id, 60_000)).status).toBe('live');
    const d = await waitFor(
      'the deployment to end as crashed',
      async () => {
        const r = await deploymentOf(owner.token, id);
        return r.status === 'crashed' ? r : null;
      },
      120_000,
      250,
    );
    expect(d.errorMessage).toMatch(/\(last: out of memory, /);
    const o = { url: t.url, home: scratchHome(), env: { PIER_TOKEN: owner.token } };
    const run = await pier(['logs', '--project', p.slug, '-n', '200'], o);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/system the app ran out of memory \(limit 512 MB/);
    expect(run.stdout).toMatch(/the app exited \(out of memory, SIGKILL\); restarting in/);
    await t.call('destroyProjectForCli', { slug: p.slug }, owner.token);
  }, 180_000);
});

describe('the disk quota of /data', () => {
  it("gives an app writing past its plan's disk ENOSPC, visible in its log; the image is mounted on /data", async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    // 200 MB files (under the largest-file limit) until the 1 GB of the free plan is full.
    const fill =
      "const fs = require('node:fs'); const chunk = Buffer.alloc(16 * 1024 * 1024, 1); let mb = 0;" +
      ' try { for (let f = 0; f < 8; f++) { const fd = fs.openSync(`/data/fill-${f}`, "w");' +
      ' for (let i = 0; i < 12; i++) { fs.writeSync(fd, chunk); mb += 16; } fs.closeSync(fd); }' +
      ' console.log(`wrote ${mb} MB without error`); }' +
      ' catch (e) { console.error(`write failed: ${e.code} after ${mb} MB`); }';
    const { id } = await deploy(t, owner.token, p.slug, await packDir(afterFirstAnswer('filler', fill)));
    expect((await settle(t, owner.token, id, 60_000)).status).toBe('live');
    const dataDir = path.join(dataDir0(), 'apps', p.id, 'data');
    if (hosting().disk?.kind === 'image') {
      const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8');
      expect(mounts).toContain(` ${dataDir} `);
    }
    const failed = await waitFor(
      'the write to fail',
      async () => (await logLines(owner.token, p.slug)).find((l) => l.startsWith('write failed:')),
      120_000,
      500,
    );
    expect(failed).toMatch(/^write failed: ENOSPC after (\d+) MB$/);
    const mb = Number(/after (\d+) MB/.exec(failed)![1]);
    expect(mb).toBeGreaterThan(900);
    expect(mb).toBeLessThanOrEqual(1024);
    await t.call('destroyProjectForCli', { slug: p.slug }, owner.token);
    // Destroying the project unmounts and removes its image.
    expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${dataDir} `);
    expect(fs.existsSync(`${dataDir}.img`)).toBe(false);
  }, 180_000);
});
