import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { projectDir } from '../../src/areas/hosting/runtime/app-databases.ts';
import { hostUid } from '../../src/areas/hosting/runtime/sandbox.ts';
import { deployments } from '../../src/areas/hosting/runtime/tables.ts';
import type { TestApp } from '../harness.ts';
import { deploy, fixtures, hostingAppForFile, packDir, settle, viaRouter, waitFor } from '../hosting.ts';
import { seedOrg, seedProject } from '../seed.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// Apps as their scaffolders make them (test/fixtures/hosting/apps, sources and lockfile only), deployed from
// source: each is detected, installed from the registry, built with its build-time settings and served
// (issue 34), on both databases. The Next.js build is the heavy one (docs/testing.md).

let t: TestApp;
hostingAppForFile('frameworks', (app) => {
  t = app;
});

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
  removeScratchHomes();
});

function appDir(name: string, edit?: (dir: string) => void): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pier-fw-${name}-`));
  made.push(dir);
  fs.cpSync(path.join(fixtures, 'apps', name), dir, { recursive: true });
  edit?.(dir);
  return dir;
}

/** An organization (the free plan: one app each) with a project and its secrets. */
async function projectWith(secrets: Record<string, string>) {
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
function sharedBuildCache(fixture: string) {
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

async function deployLive(token: string, slug: string, dir: string) {
  const { started, id } = await deploy(t, token, slug, await packDir(dir));
  expect(started.statusCode, started.body).toBe(200);
  const d = await settle(t, token, id, 240_000);
  expect(d.status, d.errorMessage).toBe('live');
  return id;
}

async function logLines(token: string, slug: string): Promise<string[]> {
  const r = await t.call('getAppLogsForCli', { projectSlug: slug, limit: 1000 }, token);
  return (r.json().lines as { line: string }[]).map((l) => l.line);
}

async function manifestOf(id: string) {
  const [row] = await t.deps.db.orm.select().from(deployments).where(eq(deployments.id, id));
  return row!.manifest!;
}

/** Fires requests back to back until stop() and lists the ones that failed. */
function requestLoop(slug: string) {
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const done = (async () => {
    while (running) {
      try {
        const r = await viaRouter(t, slug, '/');
        if (r.status === 200) ok++;
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
      return { ok, failures };
    },
  };
}

describe('Vite + React + TypeScript (create-vite react-ts)', () => {
  let token = '';
  let slug = '';

  it('is built, serves its output only, with the VITE_ setting inlined and no other secret', async () => {
    ({ token, slug } = await projectWith({
      VITE_GREETING: 'Hello from the build',
      DB_PASSWORD: 'hunter2-secret',
    }));
    const id = await deployLive(
      token,
      slug,
      appDir('vite-react-ts', (d) => {
        fs.writeFileSync(path.join(d, '.env'), 'DB_PASSWORD=hunter2-secret\n');
        fs.writeFileSync(path.join(d, '.env.production'), 'X=1\n');
      }),
    );
    const page = await viaRouter(t, slug, '/');
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('/src/main.tsx');
    const script = /src="(\/assets\/index-[\w-]+\.js)"/.exec(page.body)?.[1];
    expect(script, page.body).toBeTruthy();
    const js = await viaRouter(t, slug, script!);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body).toContain('Hello from the build');
    expect(js.body).not.toContain('hunter2-secret');
    // Sources, manifests and dotfiles are not public; unknown paths get the SPA's index.html.
    for (const p of [
      '/package.json',
      '/package-lock.json',
      '/src/main.tsx',
      '/src/App.tsx',
      '/.env',
      '/.env.production',
      '/tsconfig.json',
    ])
      expect((await viaRouter(t, slug, p)).status, p).toBe(404);
    const deep = await viaRouter(t, slug, '/some/client/route');
    expect(deep.status).toBe(200);
    expect(deep.body).toBe(page.body);
    expect((await viaRouter(t, slug, '/assets/missing-0123abcd.js')).status).toBe(404);
    const lines = await logLines(token, slug);
    expect(lines).toContain(
      'detected vite: install: npm ci; build: npm run build; serve: static files from dist (SPA fallback)',
    );
    expect(lines).toContain('settings exposed to the build: VITE_GREETING');
    expect(lines.join('\n')).not.toContain('hunter2-secret');
    expect(await manifestOf(id)).toMatchObject({
      kind: 'vite',
      type: 'static',
      root: 'dist',
      buildEnvKeys: ['VITE_GREETING'],
      buildCacheHit: false,
      commands: { build: 'npm run build' },
    });
  }, 300_000);

  it('fails a build with a TypeScript error by its first error line; the live version answers throughout', async () => {
    const loop = requestLoop(slug);
    const broken = appDir('vite-react-ts', (d) => {
      const f = path.join(d, 'src/App.tsx');
      fs.writeFileSync(
        f,
        fs
          .readFileSync(f, 'utf8')
          .replace('function App() {', "function App() {\n  const n: number = 'text'\n  void n"),
      );
    });
    // Through the CLI, as a user deploys: its exit code, the stored reason and the build's own lines.
    const run = await pier(['deploy', broken, '--project', slug], {
      url: t.url,
      home: scratchHome(),
      env: { PIER_TOKEN: token },
    });
    const { ok, failures } = await loop.stop();
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /^Deployment failed: The build failed \(exit code \d+\) at `npm run build`: src\/App\.tsx\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'\.$/m,
    );
    // The first error line is marked among the deployment's own build lines (not the live version's log).
    expect(run.stderr).toMatch(/^> \| src\/App\.tsx\(\d+,\d+\): error TS2322/m);
    expect(run.stderr).not.toMatch(/^ {2}\| GET \//m);
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(0);
    // The second build of the same lockfile links node_modules from the build cache instead of npm ci.
    const again = await deployLive(token, slug, appDir('vite-react-ts'));
    expect(await manifestOf(again)).toMatchObject({ buildCacheHit: true });
    expect(await logLines(token, slug)).toContain(
      '> npm ci skipped: node_modules from the build cache (same lockfile)',
    );
  }, 300_000);
});

describe('server frameworks from source', () => {
  it('SvelteKit (sv create + adapter-node): built with PUBLIC_, runs build/index.js with its runtime secret', async () => {
    const { token, slug } = await projectWith({
      PUBLIC_GREETING: 'Svelte public greeting',
      RUNTIME_MESSAGE: 'svelte runtime secret',
    });
    const id = await deployLive(token, slug, appDir('sveltekit-node'));
    const page = await viaRouter(t, slug, '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Svelte public greeting');
    expect(page.body).toContain('svelte runtime secret');
    expect(await manifestOf(id)).toMatchObject({ kind: 'sveltekit', type: 'node', start: 'node build' });
  }, 300_000);

  it('Astro static: PUBLIC_ setting in the page, pages by folder, sources private', async () => {
    const { token, slug } = await projectWith({ PUBLIC_GREETING: 'Astro public greeting' });
    await deployLive(token, slug, appDir('astro-static'));
    expect((await viaRouter(t, slug, '/')).body).toContain('Astro public greeting');
    expect((await viaRouter(t, slug, '/about/')).body).toContain('About this Astro site');
    expect((await viaRouter(t, slug, '/src/pages/index.astro')).status).toBe(404);
    expect((await viaRouter(t, slug, '/package.json')).status).toBe(404);
  }, 300_000);

  it('Express and Fastify: installed from their lockfile, the runtime secret reaches the server', async () => {
    for (const name of ['express', 'fastify']) {
      const { token, slug } = await projectWith({ RUNTIME_MESSAGE: `${name} runtime secret` });
      const id = await deployLive(token, slug, appDir(name));
      const r = await viaRouter(t, slug, '/');
      expect(r.status).toBe(200);
      expect(r.body).toContain(`${name} runtime secret`);
      expect(await manifestOf(id)).toMatchObject({ kind: 'node-start', buildEnvKeys: [] });
    }
  }, 300_000);

  // The heavy one (a minute or more of `next build`), on both databases: whichever run comes first leaves its
  // build cache (node_modules, .next/cache) for the other, which then skips the install (docs/testing.md).
  it('Next.js: `next build` with NEXT_PUBLIC_ and `next start` with the runtime secret', async () => {
    const { token, slug, projectId } = await projectWith({
      NEXT_PUBLIC_GREETING: 'Next public greeting',
      RUNTIME_MESSAGE: 'next runtime secret',
    });
    const shared = sharedBuildCache('nextjs');
    shared.seed(projectId);
    const id = await deployLive(token, slug, appDir('nextjs'));
    shared.keep(projectId);
    const page = await waitFor('the Next.js page', async () => {
      const r = await viaRouter(t, slug, '/');
      return r.status === 200 ? r : null;
    });
    expect(page.body).toContain('Next public greeting');
    expect(page.body).toContain('next runtime secret');
    expect(await manifestOf(id)).toMatchObject({
      kind: 'next',
      start: 'next start',
      buildEnvKeys: ['NEXT_PUBLIC_GREETING'],
    });
  }, 420_000);
});
