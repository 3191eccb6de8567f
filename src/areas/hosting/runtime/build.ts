import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {
  cacheSaveScript,
  finishBuildCache,
  lockfileKey,
  moveModulesBack,
  moveModulesIn,
  prepareIncoming,
  REMOVED_MODULES,
  restoreBuildCache,
} from './build-cache.ts';
import { buildFailureReason } from './build-errors.ts';
import type { CgroupMode } from './cgroups.ts';
import { NPM_PRUNE } from './detect.ts';
import { hostUid, isRoot, type SandboxLimits } from './sandbox.ts';
import { sandboxProcesses, spawnSandboxed } from './sandboxed-spawn.ts';
import type { AppManifest } from './tables.ts';

// Builds from source: the detected install (`npm ci`, dev dependencies included — or node_modules linked from
// the build cache when the lockfile is unchanged), the build command, then `npm prune --omit=dev` unless the
// start command needs a dev dependency — in the same sandbox as the app (its release writable this time), with
// the project's own download cache, the build's own limits (not the app's) and a time limit. Artifacts that
// bring node_modules deploy as they are.

/**
 * Where a build puts the node_modules it does not keep: a rename (instant), not `rm -rf` — unlinking a few
 * thousand files took a second or more of every SvelteKit/Vite build here. Pier moves the folder out of the
 * release once the build ends and deletes it in the background (takeRemovedModules), off the deploy's path.
 */
// An app with nothing to install (`npm ci` of an empty lockfile) has no node_modules to move.
const REMOVE_MODULES = `rm -rf ${REMOVED_MODULES} && if [ -e node_modules ]; then mv node_modules ${REMOVED_MODULES}; fi`;

export { REMOVED_MODULES };

/** Moves a build's removed node_modules out of the release and deletes it in the background. */
export function takeRemovedModules(releaseDir: string, projectDir: string): void {
  const removed = path.join(releaseDir, REMOVED_MODULES);
  if (!fs.existsSync(removed)) return;
  const trash = path.join(projectDir, 'build-trash');
  const to = path.join(trash, `${Date.now()}-${Math.random().toString(36).slice(2)}`);
  try {
    fs.mkdirSync(trash, { recursive: true, mode: 0o700 });
    fs.renameSync(removed, to);
  } catch {
    fs.rmSync(removed, { recursive: true, force: true }); // another filesystem: delete it here and now
    return;
  }
  // With any left by a Pier that stopped before deleting them.
  for (const e of fs.readdirSync(trash))
    void fs.promises.rm(path.join(trash, e), { recursive: true, force: true }).catch(() => {});
}

export type BuildSteps = {
  install: string | null;
  build: string | null;
  prune: string | null;
  /** Why node_modules is removed instead of pruned (then `prune` is the removal). */
  pruneSkipped?: string;
};

export function buildSteps(m: AppManifest, cacheHit: boolean): BuildSteps {
  const steps = {
    install: cacheHit ? null : (m.commands?.install ?? null),
    build: m.commands?.build ?? null,
  };
  if (m.keepDevDeps) return { ...steps, prune: null };
  // A static site is served from its output folder, and an app with no dependencies keeps nothing: neither needs
  // node_modules, and removing it is far quicker than npm's prune.
  if (m.type === 'static')
    return { ...steps, prune: REMOVE_MODULES, pruneSkipped: 'a static site needs no node_modules' };
  if (m.noRuntimeDeps) return { ...steps, prune: REMOVE_MODULES, pruneSkipped: 'no runtime dependencies' };
  return { ...steps, prune: m.commands?.prune ?? NPM_PRUNE };
}

/** saveCache: the shell step that fills the build cache, run after the build and before the prune. */
export function buildScript(s: BuildSteps, saveCache = ''): string {
  const steps: string[] = [];
  // The CLI follows the build by these "> npm …" lines (src/cli/deploy/build-steps.ts).
  if (!s.install) steps.push('echo "> npm ci skipped: node_modules from the build cache (same lockfile)"');
  else steps.push(`echo "> ${s.install}" && ${s.install}`);
  if (s.build) steps.push(`echo "> ${s.build}" && ${s.build}`);
  if (saveCache) steps.push(saveCache);
  if (s.prune && s.pruneSkipped)
    steps.push(`echo "> npm prune skipped: ${s.pruneSkipped} (node_modules removed)" && ${s.prune}`);
  else if (s.prune) steps.push(`echo "> ${s.prune}" && ${s.prune}`);
  return steps.join(' && ');
}

export type BuildResult =
  | { ok: true; ms: number; cacheHit: boolean }
  | { ok: false; reason: string; cacheHit: boolean };

/** The node_modules and framework caches are kept up to this size per project. */
export const BUILD_CACHE_MAX_BYTES = 1536 * 1024 * 1024;

/** Runs the build of one release; the failure reason names the error line, an out-of-memory kill or a timeout. */
export async function runBuild(o: {
  projectId: string;
  releaseDir: string;
  /** The project's folder (DATA_DIR/apps/<id>): its npm cache, build cache and the build's scratch home. */
  projectDir: string;
  manifest: AppManifest;
  /** Build-time settings (buildTimeEnv of the project's secrets, build-secrets.ts). */
  env: Record<string, string>;
  limits: SandboxLimits;
  /** Null when the sandbox is off (APP_SANDBOX=off): the build then runs as a plain child like the apps. */
  cgroups: CgroupMode | null;
  /** OUTBOUND_ALLOW's CIDRs (a registry mirror on the LAN, decision 082). */
  outboundAllow?: string[];
  timeoutMs: number;
  cacheMaxBytes?: number;
  onLine: (stream: 'stdout' | 'stderr' | 'system', line: string) => void;
}): Promise<BuildResult> {
  const t0 = Date.now();
  const cache = path.join(o.projectDir, 'npm-cache');
  const home = path.join(o.projectDir, 'build-home');
  fs.mkdirSync(cache, { recursive: true, mode: 0o700 });
  if (isRoot()) fs.chownSync(cache, hostUid(o.projectId), hostUid(o.projectId));
  if (o.manifest.replaceModules && fs.existsSync(path.join(o.releaseDir, 'node_modules'))) {
    fs.rmSync(path.join(o.releaseDir, 'node_modules'), { recursive: true, force: true });
    o.onLine('system', 'the packed node_modules are replaced: the app is built from its lockfile here');
  }
  const key = o.manifest.commands?.install ? lockfileKey(o.releaseDir, o.manifest.commands.install) : null;
  // A build that removes node_modules afterwards borrows the cached folder itself (build-cache.ts).
  const moved = !!buildSteps(o.manifest, true).pruneSkipped && moveModulesIn(o.projectDir, o.releaseDir, key);
  const cacheHit = restoreBuildCache(o.projectDir, o.releaseDir, key) || moved;
  if (cacheHit) o.onLine('system', `build cache: node_modules linked for lockfile ${key!.slice(0, 12)}`);
  const steps = buildSteps(o.manifest, cacheHit);
  // The build may write only the cache's `incoming` folder (bound alone); what is kept is Pier's to move.
  const incoming = prepareIncoming(o.projectDir);
  // bwrap resolves the folders it binds as the build's uid (sandbox.ts prepareFolders): it must reach them.
  if (isRoot())
    for (const d of [path.dirname(incoming), incoming])
      fs.chownSync(d, hostUid(o.projectId), hostUid(o.projectId));
  const script = buildScript(
    steps,
    key ? cacheSaveScript(o.cgroups ? '/build-cache/incoming' : incoming, !cacheHit) : '',
  );
  const env = {
    ...o.env,
    NODE_ENV: 'production',
    CI: 'true',
    npm_config_update_notifier: 'false',
    NEXT_TELEMETRY_DISABLED: '1',
    ASTRO_TELEMETRY_DISABLED: '1',
  };
  let kill: () => void;
  let child: ReturnType<typeof spawn>;
  let oomKills = () => 0;
  let removeGroup = () => {};
  if (o.cgroups) {
    const sb = spawnSandboxed({
      releaseDir: o.releaseDir,
      start: script,
      nodeArgs: null,
      env: { ...env, npm_config_cache: '/cache' },
      shim: '/dev/null',
      sandbox: { projectId: o.projectId, dataDir: home, limits: o.limits, outboundAllow: o.outboundAllow },
      cgroups: o.cgroups,
      releaseWritable: true,
      binds: [
        [cache, '/cache'],
        [incoming, '/build-cache/incoming'],
      ],
    });
    child = sb.child;
    oomKills = () => sb.cgroup?.oomKills() ?? 0;
    kill = () =>
      void sb.initPid.then((p) => {
        for (const pid of p ? [p, ...sandboxProcesses(p)] : [])
          try {
            process.kill(pid, 'SIGKILL');
          } catch {}
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {}
      });
    // The group is removed once its kill count has been read (below).
    removeGroup = () => void sb.cgroup?.remove();
  } else {
    fs.mkdirSync(home, { recursive: true });
    child = spawn('/bin/sh', ['-c', script], {
      cwd: o.releaseDir,
      env: {
        PATH: `${path.join(o.releaseDir, 'node_modules/.bin')}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
        HOME: home,
        ...env,
        NODE_OPTIONS: `--max-old-space-size=${Math.max(256, Math.floor(o.limits.memoryMb * 0.75))}`,
        npm_config_cache: cache,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    };
  }
  // The failing step's own lines (from its "> command" line on), for the error line and the reason.
  const known = new Map(
    [steps.install, steps.build, steps.prune].filter((s): s is string => !!s).map((s) => [`> ${s}`, s]),
  );
  let step: string | null = null;
  let lines: string[] = [];
  for (const [stream, s] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const)
    if (s)
      readline.createInterface({ input: s, crlfDelay: Infinity }).on('line', (l) => {
        const started = known.get(l);
        if (started) {
          step = started;
          lines = [];
        } else if (lines.length < 5000) lines.push(l);
        o.onLine(stream, l);
      });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, o.timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once('exit', (c, sig) => resolve([c, sig]));
    child.once('error', () => resolve([-1, null]));
  });
  clearTimeout(timer);
  if (moved) moveModulesBack(o.projectDir, o.releaseDir, key!);
  takeRemovedModules(o.releaseDir, o.projectDir);
  const ooms = oomKills();
  removeGroup();
  fs.rmSync(home, { recursive: true, force: true });
  if (timedOut || code !== 0) {
    const reason = buildFailureReason({
      code,
      signal,
      oomKills: ooms,
      memoryMb: o.limits.memoryMb,
      timedOut,
      timeoutMs: o.timeoutMs,
      step,
      lines,
    });
    return { ok: false, reason, cacheHit };
  }
  const kept = finishBuildCache(o.projectDir, key, o.cacheMaxBytes ?? BUILD_CACHE_MAX_BYTES);
  if (key && !kept.saved && kept.bytes > 0)
    o.onLine('system', `build cache: not kept (${Math.round(kept.bytes / 1048576)} MB is over its bound)`);
  return { ok: true, ms: Date.now() - t0, cacheHit };
}
