import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { LogStream } from './app-logs.ts';

// The local runtime driver: one supervised child process per running app version, on a loopback port of its
// own, in its own working directory, with only the environment Pier gives it (none of Pier's own).

export type AppProcess = {
  pid: number;
  port: number;
  child: ChildProcess;
  /** Started as `node --require handoff-shim.cjs …` with an IPC channel: client connections can be handed to it. */
  ipc: boolean;
  /** Resolves when the process has exited, with its exit code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(graceMs?: number): Promise<void>;
};

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
};

export const HANDOFF_SHIM = fileURLToPath(new URL('./handoff-shim.cjs', import.meta.url));

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
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: -1, signal: null }));
  });
  for (const [stream, s] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    if (s) readline.createInterface({ input: s, crlfDelay: Infinity }).on('line', (l) => o.onLine(stream, l));
  }
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
    child,
    ipc: nodeArgs !== null,
    exited,
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
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  void proc.exited.then((e) => {
    exit = e;
  });
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exit) {
      const e = exit as { code: number | null; signal: NodeJS.Signals | null };
      return { ok: false, reason: `The app exited during start-up (${e.signal ?? `code ${e.code}`}).` };
    }
    const status = await probe(proc.port, healthPath);
    if (typeof status === 'number' && status < 500) return { ok: true };
    last = typeof status === 'number' ? `HTTP ${status}` : status;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    ok: false,
    reason: `The health check GET ${healthPath} did not pass within ${Math.round(timeoutMs / 1000)} s (last: ${last}).`,
  };
}

function probe(port: number, p: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, timeout: 2000, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message));
  });
}
