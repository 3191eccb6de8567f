import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { LogStream } from './app-logs.ts';
import type { CgroupMode } from './cgroups.ts';
import type { SandboxSpec } from './sandbox.ts';
import { sandboxProcesses, spawnSandboxed } from './sandboxed-spawn.ts';

// The local runtime driver: one supervised child process per running app version, on a loopback port of its
// own, in its own working directory, with only the environment Pier gives it (none of Pier's own).

export type AppProcess = {
  pid: number;
  port: number;
  /**
   * Where Pier connects to the app: in its sandbox the app's port is on the loopback of its own network
   * namespace, so Pier uses the Unix socket the net shim listens on (decision 066); null means 127.0.0.1:port.
   */
  socketPath: string | null;
  child: ChildProcess;
  /** Started as `node --require handoff-shim.cjs …` with an IPC channel: client connections can be handed to it. */
  ipc: boolean;
  /** Resolves when the process has exited, with its exit code or signal, and whether memory ran out. */
  exited: Promise<AppExit>;
  stop(graceMs?: number): Promise<void>;
  /** The app's processes as the host numbers them, the app's own first (in a sandbox it sees itself as pid 2). */
  hostPids(): Promise<number[]>;
};

export type AppExit = { code: number | null; signal: NodeJS.Signals | null; oom?: boolean };

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export type SpawnOptions = {
  cwd: string;
  start: string;
  env: Record<string, string>;
  onLine: (stream: LogStream, line: string) => void;
  /** Run a plain `node <file>` start command as node itself, with the hand-off shim and an IPC channel. */
  handoff?: boolean;
  /** Run it in its bubblewrap sandbox (APP_SANDBOX=on, the default); null runs it as a plain child. */
  sandbox?: (SandboxSpec & { cgroups: CgroupMode }) | null;
};

export const HANDOFF_SHIM = fileURLToPath(new URL('./handoff-shim.cjs', import.meta.url));
export const NET_SHIM = fileURLToPath(new URL('./net-shim.cjs', import.meta.url));

// Words that `sh -c` passes through unchanged: no quoting, expansion, globbing, redirection or comments.
const PLAIN_WORD = /^[A-Za-z0-9_./@:=,+%-]+$/;

/**
 * The arguments after `node` when the start command is plain `node [options] <file> [args]` — words that `sh`
 * would pass through unchanged, so running node directly behaves the same — else null (run it with sh).
 */
export function nodeCommand(start: string): string[] | null {
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.length < 2) return null;
  const args = words.slice(1);
  if (!args.every((w) => PLAIN_WORD.test(w))) return null;
  // Something to run, not only options (`node --version`).
  return args.some((w) => !w.startsWith('-')) ? args : null;
}

/** Starts the app in cwd with PORT set, node on PATH being Pier's own Node, in its own process group. */
export async function spawnApp(o: SpawnOptions): Promise<AppProcess> {
  if (o.sandbox) return spawnInSandbox(o, o.sandbox);
  const port = await freePort();
  const nodeDir = path.dirname(process.execPath);
  const env: Record<string, string> = {
    PATH: `${path.join(o.cwd, 'node_modules/.bin')}:${nodeDir}:/usr/local/bin:/usr/bin:/bin`,
    HOME: o.cwd,
    LANG: 'C.UTF-8',
    ...o.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
  };
  // `sh` would find an app's own node_modules/.bin/node first; keep that behaviour by using sh then.
  const nodeArgs =
    o.handoff && !fs.existsSync(path.join(o.cwd, 'node_modules/.bin/node')) ? nodeCommand(o.start) : null;
  const child = nodeArgs
    ? spawn(process.execPath, ['--require', HANDOFF_SHIM, ...nodeArgs], {
        cwd: o.cwd,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      })
    : spawn('/bin/sh', ['-c', o.start], {
        cwd: o.cwd,
        env,
        // Its own process group, so stopping kills the whole tree (sh and what it started).
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  const exited = new Promise<AppExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: -1, signal: null }));
  });
  pipeLines(child, o.onLine);
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, sig);
    } catch {
      // already gone
    }
  };
  let done = false;
  void exited.then(() => {
    done = true;
    // Whatever the shell left behind in the group goes too.
    killGroup('SIGKILL');
  });
  return {
    pid: child.pid ?? -1,
    port,
    socketPath: null,
    child,
    ipc: nodeArgs !== null,
    exited,
    hostPids: async () => (child.pid ? [child.pid] : []),
    stop: async (graceMs = 5000) => {
      if (done) return;
      killGroup('SIGTERM');
      const t = setTimeout(() => killGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
      await groupGone(child.pid, 3000);
    },
  };
}

function pipeLines(child: ChildProcess, onLine: SpawnOptions['onLine']): void {
  for (const [stream, s] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    if (s) readline.createInterface({ input: s, crlfDelay: Infinity }).on('line', (l) => onLine(stream, l));
  }
}

const HEAP_OOM = /heap out of memory|Reached heap limit/;

/** The same contract as spawnApp, for a process in its sandbox (sandboxed-spawn.ts). */
async function spawnInSandbox(
  o: SpawnOptions,
  sb: NonNullable<SpawnOptions['sandbox']>,
): Promise<AppProcess> {
  // Any port will do inside its own network namespace. The socket's name is random, not the port: a port is
  // free on the host while an older version still uses it inside its namespace, and two versions of an app
  // run side by side during a deploy (one must never unlink the other's socket).
  const port = await freePort();
  const appSocket = `app-${randomBytes(6).toString('hex')}.sock`;
  const runDir = sb.runDir ?? path.join(sb.dataDir, '..', 'run');
  const nodeArgs =
    o.handoff && !fs.existsSync(path.join(o.cwd, 'node_modules/.bin/node')) ? nodeCommand(o.start) : null;
  const { child, cgroup, initPid } = spawnSandboxed({
    releaseDir: o.cwd,
    start: o.start,
    nodeArgs,
    env: { ...o.env, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production' },
    shim: HANDOFF_SHIM,
    sandbox: sb,
    cgroups: sb.cgroups,
    run: { dir: runDir, netShim: NET_SHIM, appSocket },
  });
  let heapOom = false;
  pipeLines(child, (stream, line) => {
    if (stream === 'stderr' && HEAP_OOM.test(line)) heapOom = true;
    o.onLine(stream, line);
  });
  const oomBefore = cgroup?.oomKills() ?? 0;
  const exited = new Promise<AppExit>((resolve) => {
    child.once('exit', (code, signal) => {
      // bwrap reports a child killed by a signal as 128 + its number.
      const sig =
        code !== null && code > 128
          ? ((Object.entries(os.constants.signals).find(
              ([, n]) => n === code - 128,
            )?.[0] as NodeJS.Signals) ?? null)
          : null;
      const cgroupOom = (cgroup?.oomKills() ?? 0) > oomBefore;
      if (cgroupOom || heapOom)
        o.onLine(
          'system',
          `the app ran out of memory (limit ${sb.limits.memoryMb} MB${cgroupOom ? '' : ', JavaScript heap'}) and was killed`,
        );
      resolve({ code: sig ? null : code, signal: sig ?? signal, oom: cgroupOom || heapOom });
    });
    child.once('error', () => resolve({ code: -1, signal: null }));
  });
  const killAll = async (sig: NodeJS.Signals) => {
    const init = await initPid;
    // SIGTERM goes to the app itself (pid 1 of a namespace ignores it); SIGKILL to pid 1 ends the namespace.
    const pids = init === null ? [] : sig === 'SIGKILL' ? [init] : sandboxProcesses(init);
    for (const p of pids)
      try {
        process.kill(p, sig);
      } catch {
        // already gone
      }
    if (sig === 'SIGKILL')
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
  };
  let done = false;
  void exited.then(async () => {
    done = true;
    await killAll('SIGKILL');
    await cgroup?.remove();
    fs.rmSync(path.join(runDir, appSocket), { force: true });
  });
  return {
    pid: child.pid ?? -1,
    port,
    socketPath: path.join(runDir, appSocket),
    child,
    ipc: nodeArgs !== null,
    exited,
    hostPids: async () => {
      const init = await initPid;
      return init === null ? [] : sandboxProcesses(init);
    },
    stop: async (graceMs = 5000) => {
      if (done) return;
      await killAll('SIGTERM');
      const t = setTimeout(() => void killAll('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
      await groupGone(child.pid, 3000);
    },
  };
}

/** Waits (bounded) until no process of the group is left, so its port is free when stop() resolves. */
async function groupGone(pid: number | undefined, timeoutMs: number): Promise<void> {
  if (!pid) return;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(-pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** GETs the health path until it answers below 500, the process exits, or the time runs out. */
export async function waitHealthy(
  proc: AppProcess,
  healthPath: string,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const deadline = Date.now() + timeoutMs;
  let exit: AppExit | null = null;
  void proc.exited.then((e) => {
    exit = e;
  });
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exit) {
      const e = exit as AppExit;
      return {
        ok: false,
        reason: `The app exited during start-up (${e.oom ? 'out of memory, ' : ''}${e.signal ?? `code ${e.code}`}).`,
      };
    }
    const status = await probe(proc, healthPath);
    if (typeof status === 'number' && status < 500) return { ok: true };
    last = typeof status === 'number' ? `HTTP ${status}` : status;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    ok: false,
    reason: `The health check GET ${healthPath} did not pass within ${Math.round(timeoutMs / 1000)} s (last: ${last}).`,
  };
}

/** Where to reach the app: its Unix socket in a sandbox, else its loopback port (http.request options). */
export function appAddress(proc: AppProcess): { socketPath: string } | { host: string; port: number } {
  return proc.socketPath ? { socketPath: proc.socketPath } : { host: '127.0.0.1', port: proc.port };
}

function probe(proc: AppProcess, p: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ ...appAddress(proc), path: p, timeout: 2000, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message));
  });
}
