import fs from 'node:fs';
import path from 'node:path';
import type { AppLimits, BuildLimits } from '../../orgs/index.ts';
import { runBuild } from './build.ts';
import { buildTimeEnv } from './build-secrets.ts';
import type { CgroupMode } from './cgroups.ts';
import { describeDetection, needsBuild, resolveStaticRoot } from './detect.ts';
import type { AppManifest } from './tables.ts';

// One release's build, as the deploy log tells it: what was detected and which commands run, which settings
// the build sees (names only), the build itself, then where a static build's output is served from.

type Log = (stream: 'stdout' | 'stderr' | 'system', line: string) => void;

/** The sandbox limits of a build: the plan's build allowance on top of the app's other limits. */
export function buildSandboxLimits(app: AppLimits, build: BuildLimits, memoryOverrideMb?: number) {
  return {
    ...app,
    memoryMb: memoryOverrideMb ?? build.memoryMb,
    cpuPercent: Math.max(app.cpuPercent, build.cpuPercent),
    pids: Math.max(app.pids, build.pids),
  };
}

/** Builds the release when it needs it; returns the manifest completed with the build's facts. Throws the reason. */
export async function buildRelease(o: {
  projectId: string;
  dir: string;
  projectDir: string;
  manifest: AppManifest;
  secrets: Record<string, string>;
  /** The secrets marked for the build (decision 108); prefixed names reach it anyway. */
  buildKeys: ReadonlySet<string>;
  app: AppLimits;
  build: BuildLimits;
  memoryOverrideMb?: number;
  /** The operator's ceiling (BUILD_TIMEOUT_SEC). */
  timeoutCeilingMs?: number;
  cgroups: CgroupMode | null;
  outboundAllow?: string[];
  log: Log;
}): Promise<AppManifest> {
  const m = o.manifest;
  if (!needsBuild(o.dir, m)) return resolveStaticRoot(o.dir, m);
  o.log('system', describeDetection(m));
  const env = buildTimeEnv(o.secrets, o.buildKeys);
  const keys = Object.keys(env).sort();
  o.log(
    'system',
    keys.length
      ? `settings exposed to the build: ${keys.join(', ')}`
      : 'settings exposed to the build: none (only VITE_, PUBLIC_, NEXT_PUBLIC_, NUXT_PUBLIC_ names and secrets marked with `pier secrets set --build` are)',
  );
  const limits = buildSandboxLimits(o.app, o.build, o.memoryOverrideMb);
  const timeoutMs = Math.min(o.build.timeoutSec * 1000, o.timeoutCeilingMs ?? Number.POSITIVE_INFINITY);
  const r = await runBuild({
    projectId: o.projectId,
    releaseDir: o.dir,
    projectDir: o.projectDir,
    manifest: m,
    env,
    limits,
    cgroups: o.cgroups,
    outboundAllow: o.outboundAllow,
    timeoutMs,
    onLine: o.log,
  });
  if (!r.ok) {
    // A half-installed node_modules would make a retry skip the build.
    fs.rmSync(path.join(o.dir, 'node_modules'), { recursive: true, force: true });
    o.log('system', r.reason.split('\n')[0]!);
    throw new Error(r.reason);
  }
  const built = resolveStaticRoot(o.dir, {
    ...m,
    buildMs: r.ms,
    buildEnvKeys: keys,
    buildCacheHit: r.cacheHit,
  });
  o.log(
    'system',
    `build finished in ${(r.ms / 1000).toFixed(1)} s${r.cacheHit ? ' (node_modules from the build cache)' : ''}` +
      (built.type === 'static' ? `; serving ${built.root || '.'}` : ''),
  );
  return built;
}
