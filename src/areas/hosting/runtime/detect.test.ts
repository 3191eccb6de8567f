import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildScript, buildSteps } from './build.ts';
import { cacheSaveScript } from './build-cache.ts';
import { buildFailureReason } from './build-errors.ts';
import { buildTimeEnv } from './build-secrets.ts';
import { checkNodeVersion, describeDetection, detectApp, needsBuild, resolveStaticRoot } from './detect.ts';
import { firstErrorLine } from './error-line.ts';
import { isPrivatePath, serveStatic } from './static-site.ts';

// What Pier recognises in an app's own files (docs/hosting.md "Detection"), and how a failed build is named.

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

function app(files: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-detect-'));
  made.push(dir);
  for (const [f, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), typeof body === 'string' ? body : JSON.stringify(body));
  }
  return dir;
}
const lock = { 'package-lock.json': '{"lockfileVersion":3,"packages":{}}' };
const fixture = (name: string) =>
  path.resolve(import.meta.dirname, '../../../../test/fixtures/hosting/apps', name);

describe('detection from the app’s own files', () => {
  it('builds the scaffolded fixtures the way their frameworks want', () => {
    const vite = detectApp(fixture('vite-react-ts'));
    expect(vite).toMatchObject({ type: 'static', kind: 'vite', spa: true, outputDirs: ['dist'] });
    expect(vite.commands).toMatchObject({
      build: 'npm run build',
      install: expect.stringMatching(/^npm ci/),
    });
    expect(describeDetection(vite)).toMatch(
      /^detected vite: install: npm ci; build: npm run build; serve: static files from dist \(SPA fallback\)/,
    );
    expect(detectApp(fixture('astro-static'))).toMatchObject({ type: 'static', kind: 'astro', spa: false });
    expect(detectApp(fixture('sveltekit-node'))).toMatchObject({
      type: 'node',
      kind: 'sveltekit',
      start: 'node build',
    });
    expect(detectApp(fixture('nextjs'))).toMatchObject({ type: 'node', kind: 'next', start: 'next start' });
    expect(detectApp(fixture('express'))).toMatchObject({
      type: 'node',
      kind: 'node-start',
      start: 'node app.js',
    });
    expect(detectApp(fixture('fastify'))).toMatchObject({
      type: 'node',
      kind: 'node-start',
      keepDevDeps: false,
    });
  });

  it('builds a framework app packed with node_modules but without its output; serves a packed output', () => {
    const files = {
      'package.json': { scripts: { build: 'vite build' }, devDependencies: { vite: '8' } },
      'index.html': '<script type="module" src="/src/main.tsx"></script>',
      'node_modules/vite/package.json': '{}',
      ...lock,
    };
    const dir = app(files);
    expect(detectApp(dir)).toMatchObject({
      kind: 'vite',
      replaceModules: true,
      commands: { build: 'npm run build' },
    });
    expect(needsBuild(dir, detectApp(dir))).toBe(true);
    const built = app({ ...files, 'dist/index.html': 'built' });
    expect(detectApp(built)).toMatchObject({ kind: 'vite', type: 'static', root: 'dist' });
    expect(detectApp(built).commands).toBeUndefined();
  });

  it('knows the server entries of framework builds without a start script', () => {
    const nuxt = app({
      'package.json': { scripts: { build: 'nuxt build' }, dependencies: { nuxt: '4' } },
      ...lock,
    });
    expect(detectApp(nuxt)).toMatchObject({ kind: 'nuxt', start: 'node .output/server/index.mjs' });
    const rr = app({
      'package.json': {
        scripts: { build: 'react-router build' },
        dependencies: { '@react-router/serve': '7' },
        devDependencies: { '@react-router/dev': '7' },
      },
      ...lock,
    });
    expect(detectApp(rr)).toMatchObject({
      kind: 'remix',
      start: 'react-router-serve ./build/server/index.js',
    });
  });

  it('serves a Vite app whose start is `vite preview` as static files; an explicit start keeps dev deps', () => {
    const pkg = { scripts: { build: 'vite build', start: 'vite preview' }, devDependencies: { vite: '8' } };
    expect(detectApp(app({ 'package.json': pkg, ...lock }))).toMatchObject({ type: 'static', kind: 'vite' });
    const own = app({ 'package.json': pkg, 'pier.json': { start: 'vite preview --port $PORT' }, ...lock });
    const m = detectApp(own);
    expect(m).toMatchObject({ type: 'node', keepDevDeps: true });
    expect(buildScript(buildSteps(m, false))).not.toMatch(/npm prune/);
    // A failed build stops the chain: neither the cache step nor the prune runs after it.
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-cache-'));
    made.push(cache);
    const script = buildScript(
      { install: 'true', build: 'false', prune: 'echo pruned' },
      cacheSaveScript(cache, true),
    );
    const r = spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8', cwd: cache });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('> true\n> false\n');
    expect(fs.existsSync(path.join(cache, 'fw'))).toBe(false);
  });

  it('takes build, start, outputDir, installCommand from pier.json or package.json#pier', () => {
    const dir = app({
      'package.json': { scripts: { build: 'x' }, pier: { build: 'node gen.js', outputDir: 'site' } },
      ...lock,
    });
    const m = detectApp(dir);
    expect(m).toMatchObject({ type: 'static', commands: { build: 'node gen.js' }, outputDirs: ['site'] });
    expect(() => resolveStaticRoot(dir, m)).toThrow(/no index.html in site; set "outputDir"/);
    fs.mkdirSync(path.join(dir, 'site'));
    fs.writeFileSync(path.join(dir, 'site/index.html'), 'hi');
    expect(resolveStaticRoot(dir, m).root).toBe('site');
    const inst = app({
      'package.json': { scripts: { start: 'node s.js' } },
      'pier.json': { installCommand: 'npm install' },
    });
    expect(detectApp(inst).commands?.install).toBe('npm install');
    expect(() => detectApp(app({ 'pier.json': { outputDir: '../etc' } }))).toThrow(
      /outputDir must stay inside/,
    );
  });

  it('accepts the Node it has and refuses others clearly', () => {
    expect(checkNodeVersion('24', '24.21.0')).toBeNull();
    expect(checkNodeVersion('24.x', '24.21.0')).toBeNull();
    expect(checkNodeVersion('>=20', '24.21.0')).toBeNull();
    expect(checkNodeVersion('^24.1.0', '24.21.0')).toBeNull();
    expect(checkNodeVersion('20', '24.21.0')).toMatch(/Pier runs every app on Node 24.21.0/);
    const dir = app({ 'package.json': { scripts: { start: 'node s.js' } }, 'pier.json': { node: '18' } });
    expect(() => detectApp(dir)).toThrow(/node "18": Pier runs every app on Node/);
  });

  it('builds pnpm lockfiles with the named pnpm; refuses yarn with what to do instead', () => {
    const pnpm = detectApp(fixture('pnpm-node'));
    expect(pnpm).toMatchObject({ type: 'node', packageManager: 'pnpm@12.26.0' });
    expect(pnpm.commands?.install).toMatch(
      /^npm exec --yes pnpm@12\.26\.0 -- install --frozen-lockfile --prod=false /,
    );
    expect(buildScript(buildSteps(pnpm, false))).toContain('> npm exec --yes pnpm@12.26.0 -- prune --prod');
    const pnpmApp = (pm?: string) =>
      app({ 'package.json': { scripts: { start: 'node s.js' }, packageManager: pm }, 'pnpm-lock.yaml': '' });
    expect(detectApp(pnpmApp()).packageManager).toBe('pnpm@12.26.0');
    expect(detectApp(pnpmApp('pnpm@10.4.1+sha512.abc')).packageManager).toBe('pnpm@10.4.1');
    expect(() => detectApp(pnpmApp('pnpm@^9; rm -rf /'))).toThrow(/name an exact pnpm version/);
    expect(() => detectApp(pnpmApp('pnpm@8.15.0'))).toThrow(/pnpm 9 or later/);
    const dir = app({ 'package.json': { scripts: { start: 'node s.js' } }, 'yarn.lock': '' });
    expect(() => detectApp(dir)).toThrow(
      /yarn.lock: building with Yarn is not supported yet; include a package-lock.json/,
    );
  });
});

describe('build-time settings and failures', () => {
  it('passes only the public prefixes to the build', () => {
    expect(
      buildTimeEnv({
        VITE_A: '1',
        PUBLIC_B: '2',
        NEXT_PUBLIC_C: '3',
        NUXT_PUBLIC_D: '4',
        DB_PASSWORD: 'x',
        VITEX: 'y',
      }),
    ).toEqual({ VITE_A: '1', PUBLIC_B: '2', NEXT_PUBLIC_C: '3', NUXT_PUBLIC_D: '4' });
  });

  it('names the first compiler or bundler error, not the stack tail', () => {
    expect(
      firstErrorLine([
        '> tsc -b && vite build',
        "\x1b[96msrc/App.tsx\x1b[0m(9,9): error TS2322: Type 'string' is not assignable to type 'number'.",
        'src/App.tsx(9,9): error TS6133: x',
      ]),
    ).toBe("src/App.tsx(9,9): error TS2322: Type 'string' is not assignable to type 'number'.");
    expect(firstErrorLine(['✘ [ERROR] Expected ";" but found "}"', '    src/a.ts:1:2:'])).toBe(
      '✘ [ERROR] Expected ";" but found "}"',
    );
    expect(
      firstErrorLine([
        'Error: Cannot find module ./x',
        '    at Module._resolveFilename (node:internal)',
        'Node.js v24',
      ]),
    ).toBe('Error: Cannot find module ./x');
    expect(
      firstErrorLine(['npm error code ETARGET', 'npm error notarget No matching version found for ms@0']),
    ).toBe('npm error notarget No matching version found for ms@0');
    expect(firstErrorLine(['all good'])).toBeNull();
  });

  it('says a killed build ran out of memory or time, in words', () => {
    const base = {
      code: 137,
      signal: null,
      oomKills: 0,
      memoryMb: 2048,
      timedOut: false,
      timeoutMs: 900_000,
      step: 'npm run build',
      lines: [],
    };
    expect(buildFailureReason(base)).toBe(
      'The build was killed during `npm run build`, most likely out of memory (limit 2048 MB).',
    );
    expect(buildFailureReason({ ...base, oomKills: 1 })).toMatch(
      /^The build ran out of memory \(limit 2048 MB\)/,
    );
    expect(buildFailureReason({ ...base, timedOut: true })).toMatch(/time limit \(900 s\)/);
    expect(buildFailureReason({ ...base, code: 2, lines: ['x', 'Error: boom', '  at y'] })).toBe(
      'The build failed (exit code 2) at `npm run build`: Error: boom',
    );
  });
});

describe('what a static site never serves', () => {
  it('follows no link out of the served folder (a build made them, Pier serves them)', async () => {
    const root = app({ 'dist/index.html': 'home', 'dist/ok.txt': 'fine' });
    const outside = app({ 'secret.txt': 'host secret', 'index.html': 'not this app' });
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'dist/leak.txt'));
    fs.symlinkSync('ok.txt', path.join(root, 'dist/alias.txt'));
    const get = (url: string) =>
      new Promise<{ status: number; body: string }>((resolve) => {
        let body = '';
        let status = 0;
        const res = {
          writeHead: (s: number) => {
            status = s;
          },
          end: (b?: string) => resolve({ status, body: body + (b ?? '') }),
          write: (c: Buffer) => {
            body += c;
          },
          on: () => res,
          once: () => res,
          emit: () => true,
          destroy: () => resolve({ status: 500, body }),
        };
        serveStatic(
          path.join(root, 'dist'),
          false,
          { method: 'GET', url, headers: {} } as never,
          res as never,
        );
      });
    expect((await get('/leak.txt')).status).toBe(404);
    expect(await get('/alias.txt')).toEqual({ status: 200, body: 'fine' });
    fs.symlinkSync(outside, path.join(root, 'out'));
    expect(() =>
      resolveStaticRoot(root, { type: 'static', healthPath: '/', spa: false, outputDirs: ['out'] }),
    ).toThrow(/link leading out of the app folder/);
  });

  it('keeps manifests, lockfiles, dotfiles and TSX sources private', () => {
    for (const p of [
      '/package.json',
      '/package-lock.json',
      '/.env',
      '/a/.git/config',
      '/node_modules/x.js',
      '/src/main.tsx',
      '/pier.json',
    ])
      expect(isPrivatePath(p), p).toBe(true);
    for (const p of ['/', '/index.html', '/assets/index-abc123.js', '/.well-known/security.txt', '/v/seg.ts'])
      expect(isPrivatePath(p), p).toBe(false);
  });
});
