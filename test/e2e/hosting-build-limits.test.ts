import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness.ts';
import { deploy, hostingAppForFile, packDir, settle } from '../hosting.ts';
import { seedOrg, seedProject } from '../seed.ts';

// A build's own limits (issue 34): a build killed over its memory or its time says so in words, never as a
// bare exit code. The operator's BUILD_MEMORY_MB / BUILD_TIMEOUT_SEC keep the test small.

let t: TestApp;
hostingAppForFile(
  'build-limits',
  (app) => {
    t = app;
  },
  { BUILD_MEMORY_MB: '160', BUILD_TIMEOUT_SEC: '8' },
);

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A dependency-free app built from source, whose build runs `build`. */
function appWithBuild(build: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-build-limits-'));
  made.push(dir);
  const pkg = {
    name: 'limits',
    version: '1.0.0',
    private: true,
    scripts: { build: 'node build.js', start: 'node server.js' },
  };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg));
  fs.writeFileSync(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({
      name: 'limits',
      version: '1.0.0',
      lockfileVersion: 3,
      requires: true,
      packages: { '': pkg },
    }),
  );
  fs.writeFileSync(path.join(dir, 'build.js'), build);
  fs.writeFileSync(
    path.join(dir, 'server.js'),
    "require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT));",
  );
  return dir;
}

describe('a build over its allowance', () => {
  it('killed over its memory: "ran out of memory (limit 160 MB)" on the deployment', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    // Buffers live outside the JavaScript heap: only the memory limit stops them.
    const hog = 'const a = []; for (let i = 0; i < 64; i++) { a.push(Buffer.alloc(16 * 1024 * 1024, 1)); }';
    const { id } = await deploy(t, owner.token, p.slug, await packDir(appWithBuild(hog)));
    const d = await settle(t, owner.token, id, 120_000);
    expect(d.status).toBe('failed');
    expect(d.errorMessage).toMatch(
      /^The build (ran out of memory \(limit 160 MB\) and was killed|was killed, most likely out of memory \(limit 160 MB\))/,
    );
    expect(d.errorMessage).not.toMatch(/exit code 137/);
  }, 180_000);

  it('over its time: stopped, and the reason names the time limit', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const { id } = await deploy(
      t,
      owner.token,
      p.slug,
      await packDir(appWithBuild('setInterval(() => {}, 1000);')),
    );
    const d = await settle(t, owner.token, id, 120_000);
    expect(d.status).toBe('failed');
    expect(d.errorMessage).toBe('The build did not finish within its time limit (8 s) and was stopped.');
  }, 180_000);
});
