import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ipBinary, NSENTER } from './netns-routes.ts';

// The bubblewrap sandbox around every app process (docs/decisions/035-sandbox-hosted-apps.md). Inside, an app sees its
// release read-only at /app, its own data folder read-write at /data (PIER_APP_DATA), Pier's Node and the system
// libraries read-only, a private /tmp, a minimal /etc, and its own PID, IPC and UTS namespaces; nothing of
// DATA_DIR, other apps, or Pier's process and environment. This file only builds the command line and the
// folders; local-driver.ts runs it.

export const SANDBOX_APP = '/app';
export const SANDBOX_DATA = '/data';
export const SANDBOX_NODE_BIN = '/opt/node/bin';
export const SANDBOX_SHIM = '/opt/pier/handoff-shim.cjs';
export const SANDBOX_NET_SHIM = '/opt/pier/net-shim.cjs';
/** The project's socket folder inside: the app's own listening socket and its database socket (decision 066/067). */
export const SANDBOX_RUN = '/run/pier';
/** slirp4netns's DNS forwarder, as the app sees it in its network namespace. */
const SLIRP_DNS = '10.0.2.3';
export const SLIRP4NETNS = '/usr/bin/slirp4netns';
/** The uid and gid the app sees inside its user namespace (whatever it maps to outside). */
const INSIDE_ID = 1000;
const BWRAP = '/usr/bin/bwrap';
export const UNSHARE = '/usr/bin/unshare';
/** slirp4netns opens it as Pier's uid to give each app its way out (root opens it whatever its mode). */
export const TUN_DEVICE = '/dev/net/tun';

export type SandboxLimits = {
  memoryMb: number;
  /** Processes and threads together (the pids cgroup counts both). */
  pids: number;
  openFiles: number;
  /** The largest file the app may write (RLIMIT_FSIZE), and the size of its private /tmp. */
  diskMb: number;
  /** Share of one core, in percent (100 = one core). */
  cpuPercent: number;
};

export type SandboxSpec = {
  projectId: string;
  /** The app's writable folder on the host (bound at /data). */
  dataDir: string;
  /** The project's socket folder on the host (bound at /run/pier): its app's and its database's sockets. */
  runDir?: string;
  limits: SandboxLimits;
  /** OUTBOUND_ALLOW's IPv4 CIDRs, routed out again in the app's network namespace (decision 082). */
  outboundAllow?: string[];
};

export const isRoot = (): boolean => process.getuid?.() === 0;

/**
 * The host uid an app runs as when Pier runs as root: one per project (so a sandbox escape still meets file
 * permissions between apps), in a range no Debian account uses. A hash, so nothing is stored; two projects
 * that share one only share it outside their namespaces, where neither can see the other.
 */
export function hostUid(projectId: string): number {
  let h = 2166136261;
  for (const c of projectId) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return 200_000 + (h % 100_000);
}

/** Whether the system's root layout links /bin, /lib… into /usr (Debian 12 does) or has real folders. */
function systemBinds(): string[] {
  const out = ['--ro-bind', '/usr', '/usr'];
  for (const d of ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32']) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(d);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) out.push('--symlink', fs.readlinkSync(d), d);
    else if (st.isDirectory()) out.push('--ro-bind', d, d);
  }
  return out;
}

// Only what name resolution, TLS and `whoami` need; never the host's /etc as a whole.
const ETC_FILES = ['/etc/hosts', '/etc/nsswitch.conf', '/etc/host.conf', '/etc/localtime'];
const ETC_DIRS = ['/etc/ssl', '/etc/ca-certificates', '/etc/pki'];

export const PASSWD = `root:x:0:0:root:/root:/usr/sbin/nologin\napp:x:${INSIDE_ID}:${INSIDE_ID}:app:${SANDBOX_DATA}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
export const RESOLV_CONF = `nameserver ${SLIRP_DNS}\noptions edns0\n`;
export const GROUP = `root:x:0:\napp:x:${INSIDE_ID}:\nnogroup:x:65534:\n`;

/**
 * bwrap's arguments up to (not including) the command. The caller passes fds: 4 for bwrap's info (JSON with
 * the sandbox's pid 1 as seen outside), 5 and 6 carrying /etc/passwd and /etc/group.
 */
export function bwrapArgs(o: {
  releaseDir: string;
  dataDir: string;
  shim: string;
  tmpMb: number;
  /** A build writes into its release (node_modules, its output); a running app never does. */
  releaseWritable?: boolean;
  /** More writable folders: [host path, path inside]. */
  binds?: [string, string][];
  /**
   * Its own network namespace (decision 066): only its own loopback until slirp4netns gives it a way out, so
   * bwrap waits on fd 7 before starting the command; /etc/resolv.conf (fd 8) names slirp's DNS forwarder.
   * Without it the host's network and its /etc/resolv.conf are shared.
   */
  net?: boolean;
  /**
   * The network namespace was made before bwrap (`userNetWrapper`, Pier not root, decision 091): bwrap joins
   * it as it is (no `--unshare-net`) and still waits on fd 7 until its network is set up.
   */
  netMadeOutside?: boolean;
  /** The net shim bound at SANDBOX_NET_SHIM (the app's listening socket, decision 066). */
  netShim?: string;
}): string[] {
  const etc: string[] = ['--dir', '/etc'];
  if (o.net) etc.push('--ro-bind-data', '8', '/etc/resolv.conf');
  else etc.push('--ro-bind-try', '/etc/resolv.conf', '/etc/resolv.conf');
  for (const f of ETC_FILES) etc.push('--ro-bind-try', f, f);
  for (const d of ETC_DIRS) etc.push('--ro-bind-try', d, d);
  return [
    BWRAP,
    '--unshare-user',
    '--uid',
    String(INSIDE_ID),
    '--gid',
    String(INSIDE_ID),
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(o.net ? [...(o.netMadeOutside ? [] : ['--unshare-net']), '--block-fd', '7'] : []),
    '--hostname',
    'app',
    '--die-with-parent',
    '--new-session',
    ...systemBinds(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(o.tmpMb * 1024 * 1024),
    '--tmpfs',
    '/tmp',
    ...etc,
    '--ro-bind-data',
    '5',
    '/etc/passwd',
    '--ro-bind-data',
    '6',
    '/etc/group',
    '--ro-bind',
    path.dirname(process.execPath),
    SANDBOX_NODE_BIN,
    '--ro-bind',
    o.shim,
    SANDBOX_SHIM,
    ...(o.netShim ? ['--ro-bind', o.netShim, SANDBOX_NET_SHIM] : []),
    o.releaseWritable ? '--bind' : '--ro-bind',
    o.releaseDir,
    SANDBOX_APP,
    '--bind',
    o.dataDir,
    SANDBOX_DATA,
    ...(o.binds ?? []).flatMap(([from, to]) => ['--bind', from, to]),
    // The root (and /etc in it) was a writable tmpfs while bwrap built it; the app gets it read-only.
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_APP,
    '--info-fd',
    '4',
    '--',
  ];
}

/** Wrappers that apply the rlimits (and, as root, drop to the app's own uid) before bwrap starts. */
export function limitWrapper(projectId: string, limits: SandboxLimits): string[] {
  const out = [
    '/usr/bin/prlimit',
    `--nofile=${limits.openFiles}:${limits.openFiles}`,
    `--fsize=${limits.diskMb * 1024 * 1024}`,
    '--core=0',
  ];
  if (isRoot()) {
    const id = hostUid(projectId);
    // RLIMIT_NPROC counts per host uid, and each project has its own uid when Pier runs as root.
    out.push(`--nproc=${limits.pids}:${limits.pids}`);
    out.push('--', '/usr/bin/setpriv', `--reuid=${id}`, `--regid=${id}`, '--clear-groups', '--');
  } else out.push('--');
  return out;
}

/**
 * Pier not root (decision 091): a user namespace of Pier's own uid (mapped to root inside it, nothing else
 * mapped) with a network namespace it owns, made by `unshare` which then execs bwrap. bwrap's own process stays
 * in that user namespace (`/proc/<bwrap>/ns/user` owns the network namespace), so slirp4netns and `ip` can
 * enter both as Pier's uid; the app runs one user namespace further down (bwrap's `--unshare-user`, uid 1000),
 * with no capability over the network namespace.
 */
export function userNetWrapper(unshare = UNSHARE): string[] {
  return [unshare, '--user', '--map-root-user', '--net', '--'];
}

/**
 * Makes the app's folders usable by its host uid: the data folder is the app's own (0700), the release is
 * readable by it, and (as root) DATA_DIR down to the release and data folders may be traversed (0711, never
 * listed) because bwrap resolves the paths it binds as the app's uid. Every secret file in DATA_DIR is 0600.
 */
export function prepareFolders(o: {
  projectId: string;
  dataDir: string;
  releaseDir: string;
  runDir?: string;
}): void {
  fs.mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  if (o.runDir) fs.mkdirSync(o.runDir, { recursive: true, mode: 0o700 });
  if (!isRoot()) return;
  const id = hostUid(o.projectId);
  for (const d of o.runDir ? [o.dataDir, o.runDir] : [o.dataDir]) {
    fs.chownSync(d, id, id);
    fs.chmodSync(d, 0o700);
  }
  chownTree(o.releaseDir, id);
  for (const leaf of [o.dataDir, o.releaseDir, ...(o.runDir ? [o.runDir] : [])]) {
    for (let d = path.dirname(leaf); d !== path.dirname(d); d = path.dirname(d)) {
      const st = fs.statSync(d);
      if ((st.mode & 0o001) === 0) fs.chmodSync(d, (st.mode & 0o7777) | 0o001);
    }
  }
}

function chownTree(dir: string, id: number): void {
  const st = fs.lstatSync(dir);
  if (st.uid === id) return; // done for this release already
  // Pier unpacks a release as itself, so a folder of the release already the app's can only be one the build
  // made or the build cache lent (node_modules): all of it is the app's already, and it is not walked.
  const walk = (p: string) => {
    const s = fs.lstatSync(p);
    if (s.isDirectory() && s.uid === id && p !== dir) return;
    fs.lchownSync(p, id, id);
    if (s.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
  };
  walk(dir);
}

/**
 * bwrap's own set-up failure that a second start clears, found in the lines a start printed before it exited:
 * the line, or null. Its loopback set-up failed when something else brought `lo` up first (slirp4netns's
 * --configure did, decision 082); bwrap 0.8 then prints a stale errno ("No child processes"). Pier no longer
 * races it, so a retry is only the guard for what is left (a kernel refusing the address for another reason).
 */
export function retryableSandboxFailure(stderrLines: readonly string[]): string | null {
  return stderrLines.find((l) => /^bwrap: loopback: Failed RTM_NEW(ADDR|LINK)\b/.test(l)) ?? null;
}

function deviceProblem(device: string): string | null {
  try {
    fs.accessSync(device, fs.constants.R_OK | fs.constants.W_OK);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}

/** Runs a real sandbox once (Node printing ok): the reason it cannot be set up, or null when it can. */
export function sandboxProblem(
  scratch: string,
  bwrap = BWRAP,
  unshare = UNSHARE,
  tun = TUN_DEVICE,
): string | null {
  if (!fs.existsSync(bwrap))
    return 'bubblewrap is not installed (apt-get install bubblewrap), or set APP_SANDBOX=off to run apps unsandboxed.';
  if (!fs.existsSync(SLIRP4NETNS))
    return 'slirp4netns is not installed (apt-get install slirp4netns): apps get their own network namespace and reach the internet through it. Install it, or set APP_SANDBOX=off to run apps unsandboxed.';
  // Every app gets its own network namespace, whose routes Pier writes with nsenter + ip (decisions 082, 091).
  if (!ipBinary())
    return "iproute2 is not installed (apt-get install iproute2): Pier writes the routes that keep apps away from private ranges and the host's own addresses with `ip`. Install it, or set APP_SANDBOX=off to run apps unsandboxed.";
  if (!fs.existsSync(NSENTER))
    return "nsenter is not installed (apt-get install util-linux): Pier enters each app's network namespace with it to write its routes. Install it, or set APP_SANDBOX=off to run apps unsandboxed.";
  if (!isRoot() && !fs.existsSync(unshare))
    return "unshare is not installed (apt-get install util-linux): Pier is not root, so it makes each app's user and network namespace with it. Install it, run Pier as root, or set APP_SANDBOX=off to run apps unsandboxed.";
  // Checked here because otherwise every app would die at start-up with only slirp4netns's open() error to show.
  const tunProblem = isRoot() ? null : deviceProblem(tun);
  if (tunProblem)
    return `Pier is not root, and it cannot open ${tun} (${tunProblem}): slirp4netns gives each app its way out through it. Make it readable and writable by all (chmod 0666 ${tun}, as Debian's udev does), run Pier as root, or set APP_SANDBOX=off to run apps unsandboxed.`;
  const projectId = 'sandbox-check';
  const release = path.join(scratch, 'release');
  const data = path.join(scratch, 'data');
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(release, { recursive: true });
  fs.writeFileSync(
    path.join(release, 'check.js'),
    'console.log(require("node:fs").readdirSync("/app").join())',
  );
  prepareFolders({ projectId, dataDir: data, releaseDir: release });
  const limits: SandboxLimits = { memoryMb: 256, pids: 64, openFiles: 256, diskMb: 16, cpuPercent: 100 };
  const argv = [
    ...limitWrapper(projectId, limits),
    // Its own network namespace too, made as an app's is (without slirp4netns: nothing here needs the network).
    ...(isRoot() ? [] : userNetWrapper(unshare)),
    ...bwrapArgs({ releaseDir: release, dataDir: data, shim: release + '/check.js', tmpMb: 1 }).flatMap(
      (a) => (a === '--unshare-cgroup-try' && isRoot() ? [a, '--unshare-net'] : [a]),
    ),
    `${SANDBOX_NODE_BIN}/node`,
    'check.js',
  ];
  const empty = fs.openSync('/dev/null', 'r+');
  const slirp = spawnSync(SLIRP4NETNS, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (slirp.status !== 0)
    return `slirp4netns does not run here (${(slirp.stderr || slirp.error?.message || '').trim()}). Reinstall it (apt-get install slirp4netns), or set APP_SANDBOX=off to run apps unsandboxed.`;
  const r = spawnSync(argv[0], argv.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe', 'ignore', empty, empty, empty],
    env: { PATH: '/usr/bin:/bin' },
    timeout: 20_000,
    encoding: 'utf8',
  });
  fs.closeSync(empty);
  fs.rmSync(scratch, { recursive: true, force: true });
  if (r.status === 0 && r.stdout.trim() === 'check.js') return null;
  const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').slice(-3).join(' ');
  if (!isRoot() && why.startsWith('unshare:'))
    return `Pier is not root, and it cannot make an app's user and network namespace (${why}). Allow unprivileged user namespaces (sysctl user.max_user_namespaces above 0, kernel.unprivileged_userns_clone=1 where it exists, kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04), run Pier as root, or set APP_SANDBOX=off to run apps unsandboxed.`;
  return `The app sandbox (bubblewrap) does not work here: ${why}. Install bubblewrap and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1), or set APP_SANDBOX=off to run apps unsandboxed.`;
}
