import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildScript, buildSteps, REMOVED_MODULES, takeRemovedModules } from './build.ts';
import { cacheDir, moveModulesBack, moveModulesIn, restoreBuildCache } from './build-cache.ts';
import { detectApp } from './detect.ts';

// The build cache's restore (hard links to the cached node_modules, real copies of what builds rewrite) and
// the prune an app with no runtime dependencies does not need — the second build's time (bench/build-cache).

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-build-cache-'));
  made.push(d);
  return d;
}
function write(file: string, body: string) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, body);
}

describe('build cache restore', () => {
  it('links the cached packages, copies what builds rewrite, and leaves the cache as it was', () => {
    const project = tmp();
    const cached = path.join(cacheDir(project), 'modules', 'k1');
    write(path.join(cached, 'vite/index.js'), 'export default 1;\n');
    write(path.join(cached, '.vite/deps/_metadata.json'), '{"v":1}');
    write(path.join(cached, '.package-lock.json'), '{"all":true}');
    const release = tmp();

    expect(restoreBuildCache(project, release, 'k1')).toBe(true);
    const inRelease = (f: string) => path.join(release, 'node_modules', f);
    expect(fs.readFileSync(inRelease('vite/index.js'), 'utf8')).toBe('export default 1;\n');
    // The package file is the cached one (a link, no copy); the rewritten ones are copies of their own.
    expect(fs.statSync(inRelease('vite/index.js')).ino).toBe(
      fs.statSync(path.join(cached, 'vite/index.js')).ino,
    );
    expect(fs.statSync(inRelease('.package-lock.json')).ino).not.toBe(
      fs.statSync(path.join(cached, '.package-lock.json')).ino,
    );
    // What a build and `npm prune` do there does not reach the cache.
    fs.writeFileSync(inRelease('.vite/deps/_metadata.json'), '{"v":2}');
    fs.writeFileSync(inRelease('.package-lock.json'), '{"pruned":true}');
    fs.rmSync(path.join(release, 'node_modules'), { recursive: true });
    expect(fs.readFileSync(path.join(cached, '.vite/deps/_metadata.json'), 'utf8')).toBe('{"v":1}');
    expect(fs.readFileSync(path.join(cached, '.package-lock.json'), 'utf8')).toBe('{"all":true}');
    expect(fs.readFileSync(path.join(cached, 'vite/index.js'), 'utf8')).toBe('export default 1;\n');

    // Another lockfile's key misses.
    expect(restoreBuildCache(project, tmp(), 'k2')).toBe(false);
  });

  it('lends the cached folder itself to a build that removes node_modules, and takes it back after', () => {
    const project = tmp();
    const cached = path.join(cacheDir(project), 'modules', 'k1');
    write(path.join(cached, 'vite/index.js'), 'export default 1;\n');
    const release = tmp();
    expect(moveModulesIn(project, release, 'k2')).toBe(false);
    expect(moveModulesIn(project, release, 'k1')).toBe(true);
    expect(fs.existsSync(cached)).toBe(false);
    expect(fs.readFileSync(path.join(release, 'node_modules/vite/index.js'), 'utf8')).toBe(
      'export default 1;\n',
    );
    // The build renames it away at its end (its "removal"); Pier puts it back under its key.
    fs.renameSync(path.join(release, 'node_modules'), path.join(release, REMOVED_MODULES));
    moveModulesBack(project, release, 'k1');
    expect(fs.readdirSync(release)).toEqual([]);
    expect(fs.readFileSync(path.join(cached, 'vite/index.js'), 'utf8')).toBe('export default 1;\n');
    // A failed build leaves it as node_modules: back all the same; a link planted there is not taken.
    expect(moveModulesIn(project, release, 'k1')).toBe(true);
    moveModulesBack(project, release, 'k1');
    expect(fs.existsSync(path.join(cached, 'vite/index.js'))).toBe(true);
    const other = tmp();
    fs.symlinkSync(tmp(), path.join(other, 'node_modules'));
    fs.rmSync(cached, { recursive: true });
    moveModulesBack(project, other, 'k1');
    expect(fs.existsSync(cached)).toBe(false);
  });
});

describe('prune', () => {
  const lock = '{"lockfileVersion":3,"packages":{}}';
  function app(pkg: object): string {
    const dir = tmp();
    write(path.join(dir, 'package.json'), JSON.stringify(pkg));
    write(path.join(dir, 'package-lock.json'), lock);
    return dir;
  }

  it('removes node_modules of a Node app with no dependencies instead of running npm prune', () => {
    // SvelteKit's scaffold with adapter-node: only devDependencies (the build bundles what the server needs).
    const kit = detectApp(
      path.resolve(import.meta.dirname, '../../../../test/fixtures/hosting/apps/sveltekit-node'),
    );
    expect(kit).toMatchObject({ type: 'node', noRuntimeDeps: true });
    const script = buildScript(buildSteps(kit, true));
    expect(script).toContain('npm prune skipped: no runtime dependencies (node_modules removed)');
    expect(script).not.toContain('npm prune --omit=dev');

    const dir = tmp();
    fs.mkdirSync(path.join(dir, 'node_modules/x'), { recursive: true });
    const r = spawnSync('/bin/sh', ['-c', buildScript({ ...buildSteps(kit, true), build: null })], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(fs.existsSync(path.join(dir, 'node_modules'))).toBe(false);
    // Renamed, not unlinked file by file: Pier takes it out of the release and deletes it off the deploy's path.
    expect(fs.existsSync(path.join(dir, REMOVED_MODULES, 'x'))).toBe(true);
    const project = tmp();
    takeRemovedModules(dir, project);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(fs.readdirSync(path.join(project, 'build-trash')).length).toBeLessThanOrEqual(1);
  });

  it('prunes with npm when the app has dependencies', () => {
    const express = detectApp(
      app({ scripts: { start: 'node app.js' }, dependencies: { express: '5' }, devDependencies: { x: '1' } }),
    );
    expect(express.noRuntimeDeps).toBeUndefined();
    expect(buildScript(buildSteps(express, false))).toContain('> npm prune --omit=dev');
    const optional = detectApp(app({ scripts: { start: 'node a.js' }, optionalDependencies: { y: '1' } }));
    expect(buildScript(buildSteps(optional, false))).toContain('> npm prune --omit=dev');
  });
});
