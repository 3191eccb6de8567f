import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// The build cache of one project (DATA_DIR/apps/<id>/build-cache): the node_modules its last build installed,
// keyed by a hash of the lockfile, the install command and Node's major version, plus the framework's own
// cache folders. A build whose key matches gets node_modules as hard links to the cached files instead of
// installing (well under a second instead of `npm ci`); only one key is kept, and nothing past the size bound.

/**
 * The frameworks' own caches, restored before and saved after each build (when present). Not `.svelte-kit` or
 * `.nuxt`: those are generated afresh by every build (copying them in and out only cost time).
 */
export const FRAMEWORK_CACHES = ['.next/cache', '.astro', 'node_modules/.astro'];

/**
 * What tools rewrite in place inside node_modules during a build — Vite's, Babel's and webpack's caches, and
 * npm's hidden lockfile (npm prune rewrites it) — restored as real copies, so the cached (linked) files stay as
 * the install left them.
 */
const WRITTEN_IN_MODULES = ['.cache', '.vite', '.astro', '.package-lock.json'];

export function cacheDir(projectDir: string): string {
  return path.join(projectDir, 'build-cache');
}

export function lockfileKey(releaseDir: string, install: string): string | null {
  const lock = ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml']
    .map((f) => path.join(releaseDir, f))
    .find((f) => fs.existsSync(f));
  if (!lock) return null;
  return crypto
    .createHash('sha256')
    .update(fs.readFileSync(lock))
    .update(`\0${install}\0${process.versions.node.split('.')[0]}`)
    .digest('hex')
    .slice(0, 32);
}

/** `du -sb`: a node_modules of tens of thousands of files is summed in C, not in a JavaScript walk. */
function treeBytes(dir: string): number {
  const out = spawnSync('du', ['-sb', dir], { encoding: 'utf8' }).stdout ?? '';
  return Number(out.split('\t')[0]) || 0;
}

/** `cp -a`: keeps modes, times, links and owners (the build's uid), and is far quicker than fs.cpSync. */
function copyTree(from: string, to: string): boolean {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  return spawnSync('cp', ['-a', from, to], { stdio: 'ignore' }).status === 0;
}

/**
 * `cp -al`: the folders made afresh, the files hard links to the cached ones — for 85 MB of node_modules a few
 * thousand directories instead of every byte. Tools replace or delete files (npm prune unlinks them), they do
 * not rewrite a package's files in place; what they do rewrite is copied for real (WRITTEN_IN_MODULES). A failed
 * build keeps the cache: the next one (the fix) is the one that most wants it.
 */
function linkModules(from: string, to: string): boolean {
  if (spawnSync('cp', ['-al', from, to], { stdio: 'ignore' }).status !== 0) return false;
  for (const d of WRITTEN_IN_MODULES) {
    const inner = path.join(to, d);
    if (!fs.existsSync(inner)) continue;
    fs.rmSync(inner, { recursive: true, force: true });
    if (!copyTree(path.join(from, d), inner)) return false;
  }
  return true;
}

/** Where a build leaves the node_modules it does not keep (build.ts): renamed, not unlinked file by file. */
export const REMOVED_MODULES = '.pier-removed-modules';

/**
 * For a build that removes node_modules afterwards (a static site, an app without dependencies): the cached
 * node_modules itself is moved into the release (one rename) instead of hard-linking its few thousand files,
 * and moved back once the build ends (moveModulesBack) instead of being unlinked. True when it moved. What the
 * build's tools write inside it (Vite's `.vite`) stays in the cache, as their caches are meant to.
 */
export function moveModulesIn(projectDir: string, releaseDir: string, key: string | null): boolean {
  if (!key) return false;
  const modules = path.join(cacheDir(projectDir), 'modules', key);
  const to = path.join(releaseDir, 'node_modules');
  if (!isRealDir(modules) || fs.existsSync(to)) return false;
  try {
    fs.renameSync(modules, to);
    return true;
  } catch {
    return false;
  }
}

/** Puts the node_modules moved in by moveModulesIn back under its key (unless a newer build saved one meanwhile). */
export function moveModulesBack(projectDir: string, releaseDir: string, key: string): void {
  const target = path.join(cacheDir(projectDir), 'modules', key);
  for (const name of [REMOVED_MODULES, 'node_modules']) {
    const p = path.join(releaseDir, name);
    if (!isRealDir(p) || fs.existsSync(target)) continue;
    try {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.renameSync(p, target);
      return;
    } catch {
      // left in the release: removed with it, or by takeRemovedModules
    }
  }
}

/** Links the cached node_modules (when the key matches) and copies the framework caches into a fresh release. */
export function restoreBuildCache(projectDir: string, releaseDir: string, key: string | null): boolean {
  const dir = cacheDir(projectDir);
  let hit = false;
  const modules = key ? path.join(dir, 'modules', key) : null;
  if (modules && fs.existsSync(modules) && !fs.existsSync(path.join(releaseDir, 'node_modules'))) {
    hit = linkModules(modules, path.join(releaseDir, 'node_modules'));
    if (!hit) fs.rmSync(path.join(releaseDir, 'node_modules'), { recursive: true, force: true });
  }
  for (const f of FRAMEWORK_CACHES) {
    const from = path.join(dir, 'framework', f);
    const to = path.join(releaseDir, f);
    if (fs.existsSync(from) && !fs.existsSync(to) && fs.existsSync(path.dirname(to))) copyTree(from, to);
  }
  return hit;
}

/**
 * The shell step that copies this build's node_modules (on a miss) and framework caches into the cache's
 * `incoming` folder, before the prune removes the dev dependencies; silent, and never fails the build.
 */
export function cacheSaveScript(incoming: string, saveModules: boolean): string {
  const inc = incoming;
  const fw = FRAMEWORK_CACHES.filter((f) => !f.startsWith('node_modules/') || !saveModules)
    .map((f) => `[ -d '${f}' ] && mkdir -p "$(dirname '${inc}/fw/${f}')" && cp -a '${f}' '${inc}/fw/${f}'`)
    .join('; ');
  const modules = saveModules ? `cp -a node_modules '${inc}/node_modules'; ` : '';
  // One brace group, so the && chain around it still stops at a failed build.
  return `{ { mkdir -p '${inc}/fw' && { ${modules}${fw}; true; }; } >/dev/null 2>&1; true; }`;
}

/** A fresh, empty `incoming` folder for the build to fill (the build sees only this part of the cache). */
export function prepareIncoming(projectDir: string): string {
  const inc = path.join(cacheDir(projectDir), 'incoming');
  fs.rmSync(inc, { recursive: true, force: true });
  fs.mkdirSync(inc, { recursive: true, mode: 0o700 });
  return inc;
}

/** A real folder, not a link the build planted to make Pier move something else into the cache. */
function isRealDir(p: string): boolean {
  return fs.lstatSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/**
 * After a successful build: what the build left in `incoming` becomes the cache (node_modules under its key,
 * replacing any other key; the framework caches replaced), unless the whole passes maxBytes (then it is emptied).
 */
export function finishBuildCache(
  projectDir: string,
  key: string | null,
  maxBytes: number,
): { saved: boolean; bytes: number } {
  const dir = cacheDir(projectDir);
  const inc = path.join(dir, 'incoming');
  if (!isRealDir(inc)) return { saved: false, bytes: 0 };
  const modulesDir = path.join(dir, 'modules');
  // The modules' size is summed once, when they are saved (the cached tree does not change after that): a
  // build that reused them sums only the framework caches.
  const sizeFile = path.join(dir, 'modules-bytes');
  if (key && isRealDir(path.join(inc, 'node_modules'))) {
    fs.rmSync(modulesDir, { recursive: true, force: true });
    fs.mkdirSync(modulesDir, { recursive: true });
    fs.renameSync(path.join(inc, 'node_modules'), path.join(modulesDir, key));
    fs.writeFileSync(sizeFile, String(treeBytes(modulesDir)));
  }
  fs.rmSync(path.join(dir, 'framework'), { recursive: true, force: true });
  if (isRealDir(path.join(inc, 'fw'))) fs.renameSync(path.join(inc, 'fw'), path.join(dir, 'framework'));
  fs.rmSync(inc, { recursive: true, force: true });
  const modulesBytes = isRealDir(modulesDir)
    ? Number(fs.existsSync(sizeFile) ? fs.readFileSync(sizeFile, 'utf8') : '') || treeBytes(modulesDir)
    : 0;
  const bytes =
    modulesBytes + (isRealDir(path.join(dir, 'framework')) ? treeBytes(path.join(dir, 'framework')) : 0);
  if (bytes > maxBytes) {
    fs.rmSync(dir, { recursive: true, force: true });
    return { saved: false, bytes };
  }
  return { saved: true, bytes };
}
