import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { CgroupMode } from './cgroups.ts';
import { hostUid, isRoot, type SandboxLimits } from './sandbox.ts';
import { sandboxProcesses, spawnSandboxed } from './sandboxed-spawn.ts';

// Builds from source: a release with package.json and package-lock.json but no node_modules gets `npm ci`
// (dev dependencies included), `npm run build` when the script exists, then `npm prune --omit=dev` — in the
// same sandbox as the app (its release writable this time), with the project's own download cache, the plan's
// limits and a time limit. Artifacts that bring node_modules deploy as they are.

export type BuildPlan =
  | { kind: 'none' }
  | { kind: 'npm'; hasBuild: boolean }
  | { kind: 'unsupported'; reason: string };

export function buildPlan(dir: string): BuildPlan {
  const at = (f: string) => path.join(dir, f);
  if (!fs.existsSync(at('package.json')) || fs.existsSync(at('node_modules'))) return { kind: 'none' };
  let pkg: { scripts?: Record<string, unknown> };
  try {
    pkg = JSON.parse(fs.readFileSync(at('package.json'), 'utf8'));
  } catch {
    return { kind: 'none' }; // detectApp already said what is wrong with it
  }
  const hasBuild = typeof pkg?.scripts?.build === 'string';
  if (fs.existsSync(at('package-lock.json')) || fs.existsSync(at('npm-shrinkwrap.json')))
    return { kind: 'npm', hasBuild };
  for (const [file, tool] of [
    ['pnpm-lock.yaml', 'pnpm'],
    ['yarn.lock', 'Yarn'],
    ['bun.lockb', 'Bun'],
    ['bun.lock', 'Bun'],
  ])
    if (fs.existsSync(at(file)))
      return {
        kind: 'unsupported',
        reason: `${file}: building with ${tool} is not supported yet; include a package-lock.json (npm install --package-lock-only) or bring node_modules.`,
      };
  return { kind: 'none' };
}

export function buildScript(hasBuild: boolean): string {
  // --prefer-offline: what the project's cache holds is used without asking the registry again.
  const steps = ['npm ci --include=dev --prefer-offline --no-audit --no-fund --loglevel=warn'];
  if (hasBuild) steps.push('npm run build');
  steps.push('npm prune --omit=dev --no-audit --no-fund --loglevel=warn');
  // Each step announced, so the log shows how far the build got.
  return steps.map((s) => `echo "> ${s}" && ${s}`).join(' && ');
}

export type BuildResult = { ok: true; ms: number } | { ok: false; reason: string };

/** Runs the build of one release; the last lines of output are the reason when it fails. */
export async function runBuild(o: {
  projectId: string;
  releaseDir: string;
  /** The project's folder (DATA_DIR/apps/<id>): its npm cache and the build's scratch home live there. */
  projectDir: string;
  hasBuild: boolean;
  limits: SandboxLimits;
  /** Null when the sandbox is off (APP_SANDBOX=off): the build then runs as a plain child like the apps. */
  cgroups: CgroupMode | null;
  /** OUTBOUND_ALLOW's CIDRs (a registry mirror on the LAN, decision 082). */
  outboundAllow?: string[];
  timeoutMs: number;
  onLine: (stream: 'stdout' | 'stderr' | 'system', line: string) => void;
}): Promise<BuildResult> {
  const t0 = Date.now();
  const cache = path.join(o.projectDir, 'npm-cache');
  const home = path.join(o.projectDir, 'build-home');
  fs.mkdirSync(cache, { recursive: true, mode: 0o700 });
  if (isRoot()) fs.chownSync(cache, hostUid(o.projectId), hostUid(o.projectId));
  const script = buildScript(o.hasBuild);
  const env = { NODE_ENV: 'production', CI: 'true', npm_config_update_notifier: 'false' };
  let kill: () => void;
  let child: ReturnType<typeof spawn>;
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
      binds: [[cache, '/cache']],
    });
    child = sb.child;
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
    void new Promise((r) => child.once('exit', r)).then(() => sb.cgroup?.remove());
  } else {
    child = spawn('/bin/sh', ['-c', script], {
      cwd: o.releaseDir,
      env: {
        PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
        HOME: home,
        ...env,
        npm_config_cache: cache,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    fs.mkdirSync(home, { recursive: true });
    kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    };
  }
  const tail: string[] = [];
  for (const [stream, s] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const)
    if (s)
      readline.createInterface({ input: s, crlfDelay: Infinity }).on('line', (l) => {
        tail.push(l);
        if (tail.length > 12) tail.shift();
        o.onLine(stream, l);
      });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, o.timeoutMs);
  const code = await new Promise<number | null>((resolve) => {
    child.once('exit', (c) => resolve(c));
    child.once('error', () => resolve(-1));
  });
  clearTimeout(timer);
  fs.rmSync(home, { recursive: true, force: true });
  if (timedOut)
    return { ok: false, reason: `The build did not finish within ${Math.round(o.timeoutMs / 1000)} s.` };
  if (code !== 0) {
    const last = tail
      .filter((l) => l.trim())
      .slice(-6)
      .join('\n');
    return { ok: false, reason: `The build failed (exit code ${code}):\n${last}` };
  }
  return { ok: true, ms: Date.now() - t0 };
}
