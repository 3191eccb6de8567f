import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { type AppCgroup, type CgroupMode, createAppCgroup } from './cgroups.ts';
import { configureNamespace, hostAddresses, NSENTER, routeScript } from './netns-routes.ts';
import {
  bwrapArgs,
  GROUP,
  isRoot,
  limitWrapper,
  PASSWD,
  prepareFolders,
  RESOLV_CONF,
  SANDBOX_APP,
  SANDBOX_DATA,
  SANDBOX_NET_SHIM,
  SANDBOX_NODE_BIN,
  SANDBOX_RUN,
  SANDBOX_SHIM,
  type SandboxSpec,
  SLIRP4NETNS,
  userNetWrapper,
} from './sandbox.ts';

// Starts one app process inside its sandbox: [sh joining the cgroups →] prlimit [→ setpriv to the app's uid,
// as root | → unshare making the user + network namespace, not root] → bwrap → the app. bwrap is Pier's
// direct child (each step execs the next), so `--die-with-parent` ties the sandbox to Pier's life; the app is
// pid 2 of its own PID namespace, and killing the sandbox's pid 1 takes every process of the namespace with it.

const SYSTEM_CA = '/etc/ssl/certs/ca-certificates.crt';

export type Sandboxed = {
  child: ChildProcess;
  cgroup: AppCgroup | null;
  /** The sandbox's pid 1 as seen from outside (bwrap's info fd), once bwrap has set it up. */
  initPid: Promise<number | null>;
};

export function spawnSandboxed(o: {
  releaseDir: string;
  start: string;
  /** `node` arguments for a plain node start command run with the hand-off shim, else null (sh -c). */
  nodeArgs: string[] | null;
  env: Record<string, string>;
  shim: string;
  sandbox: SandboxSpec;
  cgroups: CgroupMode;
  releaseWritable?: boolean;
  binds?: [string, string][];
  /**
   * The project's socket folder, bound at /run/pier, and the net shim that makes the app's server listen on
   * `appSocket` there too (the proxy path's way in, decision 066). Apps get both; builds neither.
   */
  run?: { dir: string; netShim: string; appSocket: string };
  /** Its own network namespace with slirp4netns (decisions 066, 091; the default); false shares the host's. */
  net?: boolean;
}): Sandboxed {
  const { sandbox: sb } = o;
  const net = o.net ?? true;
  // Not root, slirp4netns cannot enter a network namespace bwrap makes (its user namespace is nested under
  // --disable-userns): unshare makes it first, in a user namespace of Pier's uid (decision 091).
  const netOutside = net && !isRoot();
  const binds: [string, string][] = [...(o.binds ?? [])];
  if (o.run) binds.push([o.run.dir, SANDBOX_RUN]);
  prepareFolders({
    projectId: sb.projectId,
    dataDir: sb.dataDir,
    releaseDir: o.releaseDir,
    runDir: o.run?.dir,
  });
  const cgroup = createAppCgroup(o.cgroups, sb.projectId, sb.limits);
  const inner = o.nodeArgs
    ? [`${SANDBOX_NODE_BIN}/node`, '--require', SANDBOX_SHIM, ...o.nodeArgs]
    : ['/bin/sh', '-c', o.start];
  const argv = [
    ...limitWrapper(sb.projectId, sb.limits),
    ...(netOutside ? userNetWrapper() : []),
    ...bwrapArgs({
      releaseDir: o.releaseDir,
      dataDir: sb.dataDir,
      shim: o.shim,
      tmpMb: Math.min(sb.limits.diskMb, 256),
      releaseWritable: o.releaseWritable,
      binds,
      net,
      netMadeOutside: netOutside,
      netShim: o.run?.netShim,
    }),
    ...inner,
  ];
  // Heap headroom below the memory limit, so a JavaScript leak ends as "heap out of memory" in the log
  // before the kernel kills the process (and it is the only memory limit where there are no cgroups).
  const heapMb = Math.max(32, Math.floor(sb.limits.memoryMb * 0.75));
  const env: Record<string, string> = {
    PATH: `${SANDBOX_APP}/node_modules/.bin:${SANDBOX_NODE_BIN}:/usr/local/bin:/usr/bin:/bin`,
    LANG: 'C.UTF-8',
    // The operator's trust store (bound read-only), so TLS through a company proxy works as on the host.
    ...(fs.existsSync(SYSTEM_CA) ? { NODE_EXTRA_CA_CERTS: SYSTEM_CA } : {}),
    ...o.env,
    HOME: SANDBOX_DATA,
    PIER_APP_DATA: SANDBOX_DATA,
    NODE_OPTIONS:
      `${o.env.NODE_OPTIONS ?? ''} --max-old-space-size=${heapMb}${o.run ? ` --require ${SANDBOX_NET_SHIM}` : ''}`.trim(),
    ...(o.run ? { PIER_APP_SOCKET: `${SANDBOX_RUN}/${o.run.appSocket}` } : {}),
  };
  // fd 7: bwrap waits on it until the network is set up; fd 8: the sandbox's /etc/resolv.conf.
  const stdio = [
    'ignore',
    'pipe',
    'pipe',
    o.nodeArgs ? 'ipc' : 'ignore',
    'pipe',
    'pipe',
    'pipe',
    net ? 'pipe' : 'ignore',
    net ? 'pipe' : 'ignore',
  ] as const;
  // The cgroups are joined by the first process itself (it is still Pier's uid then), so nothing the app
  // starts can run outside them even for a moment.
  const child = cgroup
    ? spawn(
        '/bin/sh',
        [
          '-c',
          `${cgroup.procsFiles.map((f) => `echo $$ > '${f}' || exit 125`).join('; ')}; exec "$@"`,
          'sh',
          ...argv,
        ],
        { cwd: '/', env, detached: true, stdio: [...stdio] },
      )
    : spawn(argv[0], argv.slice(1), { cwd: '/', env, detached: true, stdio: [...stdio] });
  for (const [fd, text] of [
    [5, PASSWD],
    [6, GROUP],
    ...(net ? ([[8, RESOLV_CONF]] as const) : []),
  ] as const) {
    const s = (child.stdio as unknown as (Writable | null)[])[fd];
    s?.on('error', () => {});
    s?.end(text);
  }
  const info = (child.stdio as unknown as (Readable | null)[])[4];
  const initPid = new Promise<number | null>((resolve) => {
    if (!info) return resolve(null);
    let buf = '';
    info.setEncoding('utf8');
    info.on('data', (d: string) => {
      buf += d;
      const m = /"child-pid":\s*(\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    info.on('error', () => resolve(null));
    info.on('close', () => resolve(null));
    child.once('exit', () => resolve(null));
  });
  if (net) void initPid.then((pid) => startNetwork(child, pid, sb.outboundAllow ?? [], netOutside));
  return { child, cgroup, initPid };
}

/**
 * Gives the sandbox's network namespace a way out: slirp4netns, with the host's loopback disabled (10.0.2.2
 * leads nowhere), its own seccomp filter and mount sandbox; then Pier configures tap0 and the routes that close
 * the private ranges and the host's own addresses (netns-routes.ts, decision 082). Only then may bwrap start the
 * app (fd 7). slirp4netns runs without --configure, which would also bring `lo` up and race with bwrap setting
 * up that same loopback ("loopback: Failed RTM_NEWADDR", decision 082). slirp4netns ends with the app, and with
 * Pier: it watches a pipe only Pier holds (--exit-fd).
 */
function startNetwork(child: ChildProcess, pid: number | null, allow: string[], outside: boolean): void {
  const gate = (child.stdio as unknown as (Writable | null)[])[7];
  gate?.on('error', () => {});
  if (pid === null || child.exitCode !== null || child.signalCode !== null) return;
  // Not root, the namespaces are entered through bwrap's own process (the one unshare became), whose user
  // namespace owns the network namespace; slirp4netns runs in that user namespace (as Pier's uid outside, with
  // the capabilities its --enable-sandbox needs there) but keeps the host's network for its connections.
  const nsPid = outside ? child.pid : pid;
  if (nsPid === undefined) return;
  const slirpArgs = [
    '--mtu=65520',
    '--disable-host-loopback',
    '--enable-sandbox',
    '--enable-seccomp',
    '--ready-fd=3',
    '--exit-fd=4',
    '--netns-type=path',
    `/proc/${nsPid}/ns/net`,
    'tap0',
  ];
  const slirp = outside
    ? spawn(
        NSENTER,
        [`--user=/proc/${nsPid}/ns/user`, '--preserve-credentials', '--', SLIRP4NETNS, ...slirpArgs],
        { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
      )
    : spawn(SLIRP4NETNS, slirpArgs, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  let why = '';
  slirp.stderr?.setEncoding('utf8').on('data', (d: string) => {
    why = (why + d).slice(-500);
  });
  const exitFd = (slirp.stdio as unknown as (Writable | null)[])[4];
  exitFd?.on('error', () => {});
  const ready = (slirp.stdio as unknown as (Readable | null)[])[3];
  ready?.on('error', () => {});
  const fail = (message: string) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stderr?.emit('data', `pier: ${message}\n`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  ready?.once('data', () => {
    const script = routeScript({ hostAddresses: hostAddresses(), allow, loopback: outside });
    void configureNamespace(nsPid, script, !outside).then((err) => {
      // Without its routes the app would reach the private ranges: it does not start.
      if (err) fail(`could not set up the app's network routes: ${err}`);
      else gate?.end('1');
    });
  });
  slirp.on('error', () => {});
  slirp.once('exit', (code) => {
    // No network, no app: without it the app would hang on its first outbound call.
    fail(`the app's network (slirp4netns) ended (code ${code}): ${why.trim()}`);
  });
  child.once('exit', () => {
    exitFd?.destroy();
    slirp.kill('SIGKILL');
  });
}

/** Every process below the sandbox's pid 1 (the app and what it started), deepest last. */
export function sandboxProcesses(initPid: number): number[] {
  const out: number[] = [];
  const visit = (pid: number) => {
    let kids: number[] = [];
    try {
      kids = fs
        .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      return;
    }
    for (const k of kids) {
      out.push(k);
      visit(k);
    }
  };
  visit(initPid);
  return out;
}
