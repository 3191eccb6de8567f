import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { projectDir } from '../../src/areas/hosting/runtime/app-databases.ts';
import { hostUid } from '../../src/areas/hosting/runtime/sandbox.ts';
import { deployments } from '../../src/areas/hosting/runtime/tables.ts';
import type { TestApp } from '../harness.ts';
import { deploy, fixtures, packDir, settle, viaRouter, waitFor } from '../hosting.ts';
import { seedOrg, seedProject } from '../seed.ts';
import { pier, scratchHome } from './cli-helpers.ts';

// What the framework tests (hosting-frameworks.test.ts) do to each app made by its scaffolder: copy it, deploy
// it, and the issue-34 "Must show" steps once it is live — a broken build that fails while the live version
// answers, and a rollback to its kept build under a request loop.

const made: string[] = [];
export function removeAppDirs(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** A copy of test/fixtures/hosting/apps/<name>, changed by `edit`. */
export function appDir(name: string, edit?: (dir: string) => void): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pier-fw-${name}-`));
  made.push(dir);
  fs.cpSync(path.join(fixtures, 'apps', name), dir, { recursive: true });
  edit?.(dir);
  return dir;
}

/** Replaces `from` by `to` in one file of an app folder (a broken build's one-line change). */
export function editFile(dir: string, file: string, from: string, to: string): void {
  const f = path.join(dir, file);
  const before = fs.readFileSync(f, 'utf8');
  expect(before, file).toContain(from);
  fs.writeFileSync(f, before.replace(from, to));
}

/** An organization (the free plan: one app each) with a project and its secrets. */
export async function projectWith(t: TestApp, secrets: Record<string, string>) {
  const { org, owner } = await seedOrg(t.deps);
  const p = await seedProject(t.deps, org);
  for (const [key, value] of Object.entries(secrets))
    expect(
      (await t.call('setSecretForCli', { projectSlug: p.slug, key, value }, owner.token)).statusCode,
    ).toBe(200);
  return { token: owner.token, slug: p.slug, projectId: p.id };
}

/**
 * A fixture's build cache shared by this file's runs on both databases (a folder per lockfile in the system's
 * temp folder): `seed` gives a new project the cache another run left, `keep` leaves this one's for the next.
 * A test-time saving only; Pier never shares a cache between projects.
 */
export function sharedBuildCache(t: TestApp, fixture: string) {
  const lock = fs.readFileSync(path.join(fixtures, 'apps', fixture, 'package-lock.json'));
  const hash = crypto.createHash('sha256').update(lock).digest('hex').slice(0, 16);
  const shared = path.join(os.tmpdir(), `pier-test-build-cache-${fixture}-${hash}`);
  const own = (projectId: string) => path.join(projectDir(t.deps, projectId), 'build-cache');
  return {
    seed(projectId: string) {
      if (!fs.existsSync(shared)) return;
      fs.mkdirSync(path.dirname(own(projectId)), { recursive: true });
      execFileSync('cp', ['-a', shared, own(projectId)]);
      // The build runs as the project's own uid (as root): the seeded files must be its own.
      if (process.getuid?.() === 0) {
        const uid = hostUid(projectId);
        execFileSync('chown', ['-R', `${uid}:${uid}`, own(projectId)]);
      }
    },
    keep(projectId: string) {
      if (fs.existsSync(shared) || !fs.existsSync(own(projectId))) return;
      const tmp = `${shared}.${process.pid}`;
      execFileSync('cp', ['-a', own(projectId), tmp]);
      try {
        fs.renameSync(tmp, shared);
      } catch {
        fs.rmSync(tmp, { recursive: true, force: true }); // the other run kept its own first
      }
    },
  };
}

export async function deployLive(t: TestApp, token: string, slug: string, dir: string) {
  const { started, id } = await deploy(t, token, slug, await packDir(dir));
  expect(started.statusCode, started.body).toBe(200);
  const d = await settle(t, token, id, 240_000);
  expect(d.status, d.errorMessage).toBe('live');
  return id;
}

export async function logLines(t: TestApp, token: string, slug: string): Promise<string[]> {
  const r = await t.call('getAppLogsForCli', { projectSlug: slug, limit: 1000 }, token);
  return (r.json().lines as { line: string }[]).map((l) => l.line);
}

export async function manifestOf(t: TestApp, id: string) {
  const [row] = await t.deps.db.orm.select().from(deployments).where(eq(deployments.id, id));
  return row!.manifest!;
}

/**
 * Fires requests at `/` back to back until stop(): the failures (not a 200), and which version answered each
 * (`label` of its body), in order.
 */
export function requestLoop(t: TestApp, slug: string, label: (body: string) => string = () => 'ok') {
  let running = true;
  const failures: string[] = [];
  const seen: string[] = [];
  const done = (async () => {
    while (running) {
      try {
        const r = await viaRouter(t, slug, '/');
        if (r.status === 200) seen.push(label(r.body));
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
      return { failures, seen, ok: seen.length };
    },
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A broken build deployed with `pier deploy` fails: exit 1, its first error line (`firstError`, one line's
 * text) in the failure reason and marked `> |` among the deployment's own lines; meanwhile the live version
 * (whose page contains `marker`) answers every request of a loop. The install is the cached one: the same
 * lockfile, so only the framework's build (or the start) runs, and fails fast.
 */
export async function brokenBuildKeepsServing(
  t: TestApp,
  o: { token: string; slug: string; broken: string; firstError: RegExp; marker: string },
) {
  const loop = requestLoop(t, o.slug, (b) => (b.includes(o.marker) ? 'live' : b.slice(0, 60)));
  await pause(100);
  const run = await pier(['deploy', o.broken, '--project', o.slug], {
    url: t.url,
    home: scratchHome(),
    env: { PIER_TOKEN: o.token },
    timeoutMs: 240_000,
  });
  const { failures, seen } = await loop.stop();
  expect(run.code, run.stderr).toBe(1);
  const err = o.firstError.source;
  expect(run.stderr).toMatch(new RegExp(`^Deployment failed: .*${err}`, 'm'));
  expect(run.stderr).toMatch(new RegExp(`^> \\| .*${err}`, 'm'));
  expect(failures).toEqual([]);
  expect(seen.length).toBeGreaterThan(0);
  expect([...new Set(seen)]).toEqual(['live']);
  return run;
}

/**
 * Rollback to the build of `id` (live before, page containing `marker`): another version goes live first (a
 * static page, no build to pay), then `rollbackDeploymentForCli` brings `id`'s kept build back under a request
 * loop, with no failed request and no build.
 */
export async function rollsBackWithoutFailure(
  t: TestApp,
  o: { token: string; slug: string; id: string; marker: string },
) {
  await deployLive(t, o.token, o.slug, path.join(fixtures, 'static-site'));
  const other = 'Hello from a static site';
  // A keep-alive connection handed to the old process drains with it: the next one reaches the site.
  await waitFor('the other version', async () => (await viaRouter(t, o.slug, '/')).body.includes(other));
  const label = (b: string) =>
    b.includes(o.marker) ? 'built' : b.includes(other) ? 'other' : b.slice(0, 60);
  const loop = requestLoop(t, o.slug, label);
  await pause(200);
  const rb = await t.call('rollbackDeploymentForCli', { projectSlug: o.slug, deploymentId: o.id }, o.token);
  expect(rb.statusCode, rb.body).toBe(200);
  expect(rb.json()).toMatchObject({ origin: 'rollback', sourceId: o.id });
  const d = await settle(t, o.token, rb.json().id, 120_000);
  expect(d.status, d.errorMessage).toBe('live');
  await waitFor(
    'the rolled-back build',
    async () => label((await viaRouter(t, o.slug, '/')).body) === 'built',
  );
  await pause(200);
  const { failures, seen } = await loop.stop();
  expect(failures).toEqual([]);
  expect(seen[0]).toBe('other');
  expect(seen.at(-1)).toBe('built');
  expect([...new Set(seen)].sort()).toEqual(['built', 'other']);
  const build = await t.call(
    'getAppLogsForCli',
    { projectSlug: o.slug, deploymentId: d.id, phase: 'build' },
    o.token,
  );
  expect(build.json().lines).toEqual([]);
}
