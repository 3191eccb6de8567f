import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { KEEP_RELEASES } from '../../src/areas/hosting/release-folders.ts';
import { appLogs, deployments } from '../../src/areas/hosting/runtime/tables.ts';
import type { TestApp } from '../harness.ts';
import {
  deploy,
  fixtures,
  hostingAppForFile,
  nodeAppDir,
  packDir,
  settle,
  viaRouter,
  waitFor,
} from '../hosting.ts';
import { resetProxy } from '../reset-proxy.ts';
import { seedOrg, seedProject } from '../seed.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// Releases (issue 34): rollback to a kept build with no failed request, redeploy from the stored artifact,
// `pier deployments`, builds pruned past KEEP_RELEASES, another organization's deployment not found; and
// `pier deploy` following a deployment through dropped connections to its real end (decision 097).

let t: TestApp;
hostingAppForFile('hosting-releases', (app) => {
  t = app;
});
afterAll(() => removeScratchHomes());

/** Fires requests back to back until stop(); counts failures and the versions seen. */
function requestLoop(slug: string) {
  let running = true;
  const failures: string[] = [];
  const versions: string[] = [];
  const done = (async () => {
    while (running) {
      try {
        const r = await viaRouter(t, slug, '/');
        if (r.status === 200) versions.push(JSON.parse(r.body).version);
        else failures.push(`${r.status} ${r.body.slice(0, 80)}`);
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return { failures, versions };
    },
  };
}

const version = async (slug: string) => JSON.parse((await viaRouter(t, slug, '/')).body).version;

async function live(token: string, slug: string, dir: string): Promise<string> {
  const { id, started } = await deploy(t, token, slug, await packDir(dir));
  expect(started.statusCode, started.body).toBe(200);
  const d = await settle(t, token, id, 120_000);
  expect(d.status, d.errorMessage).toBe('live');
  return id;
}

describe('rollback and redeploy', () => {
  it('rolls back to the previous build with 0 failed requests, redeploys from the artifact, lists who did what', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const v1 = await live(owner.token, p.slug, nodeAppDir('1'));
    const v2 = await live(owner.token, p.slug, nodeAppDir('2'));
    expect(await version(p.slug)).toBe('2');

    // The default target is the one live before; the version swaps under a request loop with no failure.
    const loop = requestLoop(p.slug);
    await new Promise((r) => setTimeout(r, 300));
    const rb = await t.call('rollbackDeploymentForCli', { projectSlug: p.slug }, owner.token);
    expect(rb.statusCode, rb.body).toBe(200);
    expect(rb.json()).toMatchObject({ origin: 'rollback', sourceId: v1, status: 'starting' });
    const d = await settle(t, owner.token, rb.json().id, 60_000);
    expect(d.status, d.errorMessage).toBe('live');
    await new Promise((r) => setTimeout(r, 300));
    const { failures, versions } = await loop.stop();
    expect(failures).toEqual([]);
    expect(versions).toContain('2');
    expect(versions.at(-1)).toBe('1');
    expect(await version(p.slug)).toBe('1');
    // No build ran for it: its log has no build phase at all.
    const own = await t.call(
      'getAppLogsForCli',
      { projectSlug: p.slug, deploymentId: d.id, phase: 'build' },
      owner.token,
    );
    expect(own.json().lines).toEqual([]);

    // `pier rollback` goes back again (to v2's build), `pier redeploy <v1>` rebuilds v1's artifact.
    const o = { url: t.url, home: scratchHome(), env: { PIER_TOKEN: owner.token }, timeoutMs: 120_000 };
    const back = await pier(['rollback', '--project', p.slug], o);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).toContain(`Rolling back to ${v2}: its kept build, no build step`);
    expect(back.stdout).toBe(`Live at http://${p.slug}.apps.test\n`);
    // A keep-alive connection handed to the old process drains with it: the next ones reach the new one.
    await waitFor('v2 back', async () => (await version(p.slug)) === '2');
    const re = await pier(['redeploy', v1, '--project', p.slug], o);
    expect(re.code, re.stderr).toBe(0);
    expect(re.stderr).toContain(`Rebuilding the stored artifact of ${v1}`);
    await waitFor('v1 rebuilt', async () => (await version(p.slug)) === '1');

    const list = await pier(['deployments', '--project', p.slug, '--json'], o);
    const rows = JSON.parse(list.stdout) as {
      id: string;
      origin: string;
      sourceId: string | null;
      status: string;
      deployedBy: string;
      kind: string;
      buildKept: boolean;
    }[];
    expect(rows.map((r) => [r.origin, r.status])).toEqual([
      ['redeploy', 'live'],
      ['rollback', 'superseded'],
      ['rollback', 'superseded'],
      ['deploy', 'superseded'],
      ['deploy', 'superseded'],
    ]);
    expect(rows[0]!.sourceId).toBe(v1);
    expect(rows.every((r) => r.deployedBy === owner.user.email && r.kind === 'prebuilt' && r.buildKept)).toBe(
      true,
    );
    const table = await pier(['deployments', '--project', p.slug], o);
    expect(table.stdout).toMatch(/live\s+prebuilt\s+.*redeploy of [0-9a-f]{8}\s+\S+@example\.com/);

    // The live deployment is not a target of a rollback.
    const cur = await t.call(
      'rollbackDeploymentForCli',
      { projectSlug: p.slug, deploymentId: rows[0]!.id },
      owner.token,
    );
    expect(cur.statusCode).toBe(409);
    expect(cur.json().error.code).toBe('DEPLOYMENT_NOT_REUSABLE');
  }, 400_000);

  it("answers 404 for another organization's deployment and 400 for a malformed id", async () => {
    const a = await seedOrg(t.deps);
    const pa = await seedProject(t.deps, a.org);
    const b = await seedOrg(t.deps);
    const pb = await seedProject(t.deps, b.org);
    const id = await live(a.owner.token, pa.slug, path.join(fixtures, 'static-site'));
    for (const fn of ['rollbackDeploymentForCli', 'redeployDeploymentForCli'] as const) {
      const own = await t.call(fn, { projectSlug: pb.slug, deploymentId: id }, b.owner.token);
      expect(own.statusCode).toBe(404);
      expect(own.json().error.code).toBe('DEPLOYMENT_NOT_FOUND');
      const theirs = await t.call(fn, { projectSlug: pa.slug, deploymentId: id }, b.owner.token);
      expect(theirs.statusCode).toBe(404);
      expect(theirs.json().error.code).toBe('PROJECT_NOT_FOUND');
      const bad = await t.call(fn, { projectSlug: pa.slug, deploymentId: 'nope' }, a.owner.token);
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.code).toBe('VALIDATION_ERROR');
    }
    const none = await t.call('rollbackDeploymentForCli', { projectSlug: pb.slug }, b.owner.token);
    expect(none.statusCode).toBe(409);
    expect(none.json().error.code).toBe('NOTHING_TO_ROLL_BACK');
    const nothing = await t.call('redeployDeploymentForCli', { projectSlug: pb.slug }, b.owner.token);
    expect(nothing.statusCode).toBe(409);
    expect(nothing.json().error.code).toBe('NOTHING_TO_REDEPLOY');
  }, 120_000);

  it(`keeps the builds of the last ${KEEP_RELEASES} live deployments; an older one is rebuilt by redeploy`, async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const site = (n: number) => {
      const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'pier-site-'));
      fs.cpSync(path.join(fixtures, 'static-site'), dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'index.html'), `<h1>site ${n}</h1>`);
      return dir;
    };
    const ids: string[] = [];
    for (let n = 1; n <= KEEP_RELEASES + 1; n++) ids.push(await live(owner.token, p.slug, site(n)));
    const releases = path.join(t.deps.config.dataDir, 'apps', p.id, 'releases');
    expect(fs.readdirSync(releases).sort()).toEqual(ids.slice(1).sort());
    const pruned = await t.call(
      'rollbackDeploymentForCli',
      { projectSlug: p.slug, deploymentId: ids[0] },
      owner.token,
    );
    expect(pruned.statusCode).toBe(409);
    expect(pruned.json().error.code).toBe('RELEASE_PRUNED');
    expect(pruned.json().error.message).toContain(`pier redeploy ${ids[0]}`);
    const re = await t.call(
      'redeployDeploymentForCli',
      { projectSlug: p.slug, deploymentId: ids[0] },
      owner.token,
    );
    expect(re.statusCode, re.body).toBe(200);
    expect((await settle(t, owner.token, re.json().id)).status).toBe('live');
    expect((await viaRouter(t, p.slug, '/')).body).toContain('site 1');
    const kept = await t.call(
      'rollbackDeploymentForCli',
      { projectSlug: p.slug, deploymentId: ids[3] },
      owner.token,
    );
    expect(kept.statusCode, kept.body).toBe(200);
    expect((await settle(t, owner.token, kept.json().id)).status).toBe('live');
    expect((await viaRouter(t, p.slug, '/')).body).toContain(`site 4`);
  }, 120_000);
});

describe('pier deploy through dropped connections', () => {
  // A Fastify-like app that takes its time to listen; the connection drops while it starts.
  const slowApp = (v: string, main: string) =>
    nodeAppDir(v, {
      'package.json': JSON.stringify({ name: 'slow', private: true, scripts: { start: 'node slow.js' } }),
      'slow.js': `setTimeout(() => require('./${main}'), 2500);\n`,
      'broken.js': 'const x = ;\n',
    });

  it('exits 0 for a deployment that goes live and 1 (its own error line marked) for one that fails', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const proxy = await resetProxy(Number(new URL(t.url).port));
    try {
      const o = { url: proxy.url, home: scratchHome(), env: { PIER_TOKEN: owner.token }, timeoutMs: 120_000 };
      const dropWhileStarting = async () => {
        await waitFor(
          'a deployment starting',
          async () => {
            const rows = await t.deps.db.orm
              .select()
              .from(deployments)
              .where(eq(deployments.projectId, p.id));
            return rows.some((r) => r.status === 'starting');
          },
          60_000,
          20,
        );
        proxy.drop(2500);
      };
      const [ok] = await Promise.all([
        pier(['deploy', slowApp('1', 'server.js'), '--project', p.slug], o),
        dropWhileStarting(),
      ]);
      expect(proxy.drops).toBeGreaterThan(0);
      expect(ok.stderr).toMatch(
        /connection lost \(Could not reach Pier .*\); following on when Pier answers/,
      );
      expect(ok.stderr).not.toMatch(/error NETWORK_ERROR/);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toBe(`Live at http://${p.slug}.apps.test\n`);

      const before = proxy.drops;
      const loop = requestLoop(p.slug);
      const [bad] = await Promise.all([
        pier(['deploy', slowApp('2', 'broken.js'), '--project', p.slug], o),
        dropWhileStarting(),
      ]);
      const { failures } = await loop.stop();
      expect(proxy.drops).toBeGreaterThan(before);
      expect(bad.code, bad.stderr).toBe(1);
      expect(bad.stderr).toMatch(
        /Deployment failed: The app exited during start-up \(code 1\)\. SyntaxError: Unexpected token/,
      );
      // Its own start log with the error marked; not a line of the live version's.
      expect(bad.stderr).toMatch(/^> \| SyntaxError: Unexpected token/m);
      expect(bad.stderr).not.toContain('\x1b[');
      expect(failures).toEqual([]);
      expect(await version(p.slug)).toBe('1');
    } finally {
      await proxy.close();
    }
  }, 300_000);
});

describe('a failed build', () => {
  it('is stored and printed by its first error line, its log lines in the build phase', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'pier-src-'));
    fs.cpSync(path.join(fixtures, 'source-app'), dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'build.js'),
      "console.log('\\x1b[36mcompiling\\x1b[0m');\nthrow new TypeError('bad config: PORT is not a number');\n",
    );
    const o = { url: t.url, home: scratchHome(), env: { PIER_TOKEN: owner.token }, timeoutMs: 180_000 };
    const run = await pier(['deploy', dir, '--project', p.slug], o);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /Deployment failed: The build failed \(exit code 1\).*: TypeError: bad config: PORT is not a number\n/,
    );
    expect(run.stderr).toMatch(/^> \| TypeError: bad config: PORT is not a number$/m);
    expect(run.stderr).toMatch(/^ {2}\| compiling$/m); // colours stripped: stderr is not a terminal
    const [d] = (await t.call('listDeploymentsForCli', { projectSlug: p.slug }, owner.token)).json();
    const build = await t.call(
      'getAppLogsForCli',
      { projectSlug: p.slug, deploymentId: d.id, phase: 'build' },
      owner.token,
    );
    expect(build.json().lines.map((l: { line: string }) => l.line)).toContain('\x1b[36mcompiling\x1b[0m');
    const runtime = await t.call(
      'getAppLogsForCli',
      { projectSlug: p.slug, deploymentId: d.id, phase: 'runtime' },
      owner.token,
    );
    expect(runtime.json().lines).toEqual([]);
  }, 200_000);
});

describe('pier logs -f', () => {
  it('follows new lines through a dropped connection, build and runtime apart', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const proxy = await resetProxy(Number(new URL(t.url).port));
    const line = (text: string, phase: 'build' | 'runtime') => ({
      projectId: p.id,
      deploymentId: null,
      ts: new Date(),
      stream: 'stdout' as const,
      phase,
      line: text,
    });
    try {
      await t.deps.db.orm
        .insert(appLogs)
        .values([line('\x1b[32mcompiled\x1b[0m', 'build'), line('GET / 200', 'runtime')]);
      const o = { url: proxy.url, home: scratchHome(), env: { PIER_TOKEN: owner.token }, timeoutMs: 9000 };
      const following = pier(['logs', '--project', p.slug, '-f', '--runtime'], o);
      const all = await pier(['logs', '--project', p.slug, '--build'], { ...o, timeoutMs: 20_000 });
      expect(all.stdout).toMatch(/ build stdout compiled\n$/);
      await new Promise((r) => setTimeout(r, 2000));
      proxy.drop(2500);
      await t.deps.db.orm
        .insert(appLogs)
        .values([line('during the outage', 'runtime'), line('npm ci', 'build')]);
      const run = await following;
      expect(run.stderr).toMatch(/connection lost \(Could not reach Pier/);
      expect(run.stderr).toContain('reconnected');
      expect(
        run.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => l.replace(/^\S+ /, '')),
      ).toEqual(['stdout GET / 200', 'stdout during the outage']);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
