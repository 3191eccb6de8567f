import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness.ts';
import { hostingAppForFile, viaRouter, waitFor } from '../hosting.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';
import {
  appDir,
  brokenBuildKeepsServing,
  deployLive as deployLiveOn,
  editFile,
  logLines as logLinesOf,
  manifestOf as manifestOn,
  projectWith as projectOn,
  removeAppDirs,
  requestLoop as requestLoopOn,
  rollsBackWithoutFailure,
  sharedBuildCache,
} from './framework-apps.ts';

// Apps as their scaffolders make them (test/fixtures/hosting/apps, sources and lockfile only), deployed from
// source: each is detected, installed from the registry, built with its build-time settings and served
// (issue 34), on both databases. The Next.js build is the heavy one (docs/testing.md). Once each is live: a
// broken build fails by its first error line while it answers, and a rollback to its build fails no request.

let t: TestApp;
hostingAppForFile('frameworks', (app) => {
  t = app;
});

afterAll(() => {
  removeAppDirs();
  removeScratchHomes();
});

const projectWith = (secrets: Record<string, string>) => projectOn(t, secrets);
const deployLive = (token: string, slug: string, dir: string) => deployLiveOn(t, token, slug, dir);
const logLines = (token: string, slug: string) => logLinesOf(t, token, slug);
const manifestOf = (id: string) => manifestOn(t, id);
const requestLoop = (slug: string) => requestLoopOn(t, slug);

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
    await rollsBackWithoutFailure(t, { token, slug, id: again, marker: '<div id="root">' });
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
    const marker = 'svelte runtime secret';
    await brokenBuildKeepsServing(t, {
      token,
      slug,
      marker,
      broken: appDir('sveltekit-node', (d) =>
        editFile(
          d,
          'src/routes/+page.svelte',
          '<h1>Welcome to SvelteKit</h1>',
          '<h1>Welcome to SvelteKit</h2>',
        ),
      ),
      firstError: /attempted to close an element that was not open/,
    });
    await rollsBackWithoutFailure(t, { token, slug, id, marker });
  }, 300_000);

  it('Astro static: PUBLIC_ setting in the page, pages by folder, sources private', async () => {
    const { token, slug } = await projectWith({ PUBLIC_GREETING: 'Astro public greeting' });
    const id = await deployLive(token, slug, appDir('astro-static'));
    expect((await viaRouter(t, slug, '/')).body).toContain('Astro public greeting');
    expect((await viaRouter(t, slug, '/about/')).body).toContain('About this Astro site');
    expect((await viaRouter(t, slug, '/src/pages/index.astro')).status).toBe(404);
    expect((await viaRouter(t, slug, '/package.json')).status).toBe(404);
    const marker = 'Astro public greeting';
    await brokenBuildKeepsServing(t, {
      token,
      slug,
      marker,
      broken: appDir('astro-static', (d) =>
        editFile(d, 'src/pages/index.astro', "?? 'Hello';", "?? 'Hello' +;"),
      ),
      firstError: /\[CompilerError\] Unexpected token/,
    });
    await rollsBackWithoutFailure(t, { token, slug, id, marker });
  }, 300_000);

  for (const [name, file, from, firstError] of [
    ['express', 'app.js', 'const app = express()', /SyntaxError: /],
    ['fastify', 'routes/root.js', 'return { root: true,', /SyntaxError: /],
  ] as const)
    it(`${name === 'express' ? 'Express' : 'Fastify (fastify-cli generate, `fastify start`)'}: installed from its lockfile, the runtime secret reaches the server`, async () => {
      const { token, slug } = await projectWith({ RUNTIME_MESSAGE: `${name} runtime secret` });
      const id = await deployLive(token, slug, appDir(name));
      const r = await viaRouter(t, slug, '/');
      expect(r.status).toBe(200);
      expect(r.body).toContain(`${name} runtime secret`);
      expect(await manifestOf(id)).toMatchObject({ kind: 'node-start', buildEnvKeys: [] });
      // No build step: the syntax error fails the start, and the live version keeps answering.
      const marker = `${name} runtime secret`;
      await brokenBuildKeepsServing(t, {
        token,
        slug,
        marker,
        broken: appDir(name, (d) => editFile(d, file, from, `${from} +;`)),
        firstError,
      });
      await rollsBackWithoutFailure(t, { token, slug, id, marker });
    }, 300_000);

  // The heavy one (a minute or more of `next build`), on both databases: whichever run comes first leaves its
  // build cache (node_modules, .next/cache) for the other, which then skips the install (docs/testing.md). Its
  // one full build serves the broken build (a syntax error: the compile fails in seconds) and the rollback.
  it('Next.js: `next build` with NEXT_PUBLIC_ and `next start` with the runtime secret', async () => {
    const { token, slug, projectId } = await projectWith({
      NEXT_PUBLIC_GREETING: 'Next public greeting',
      RUNTIME_MESSAGE: 'next runtime secret',
    });
    const shared = sharedBuildCache(t, 'nextjs');
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
    const marker = 'next runtime secret';
    await brokenBuildKeepsServing(t, {
      token,
      slug,
      marker,
      broken: appDir('nextjs', (d) => editFile(d, 'app/page.tsx', '<h1>Next.js</h1>', '<h1>Next.js</h2>')),
      firstError: /Error: Expected corresponding JSX closing tag for <h1>/,
    });
    await rollsBackWithoutFailure(t, { token, slug, id, marker });
  }, 420_000);
});
