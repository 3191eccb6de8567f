import fs from 'node:fs';
import path from 'node:path';
import type { SandboxLimits } from './sandbox.ts';

// Per-app cgroups on a cgroup v1 host (this machine mounts memory, pids and cpu separately; there is no
// cgroup.controllers file of v2). Each app process gets a group of its own under Pier's own group in each
// controller; Pier needs write access there, which in practice means running as root. Where it cannot,
// the driver falls back to rlimits and Node's heap flag, and says so in the log at start-up.

const ROOT = '/sys/fs/cgroup';
const CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
type Controller = (typeof CONTROLLERS)[number];

export type CgroupMode = { kind: 'v1'; bases: Record<Controller, string> } | { kind: 'none'; why: string };

let counter = 0;

/** Which limits this machine can enforce with cgroups; decided once at start-up and logged. */
export function detectCgroups(): CgroupMode {
  if (fs.existsSync(path.join(ROOT, 'cgroup.controllers')))
    return { kind: 'none', why: 'cgroup v2 is not supported yet (rlimits and the heap flag apply)' };
  let own: Map<string, string>;
  try {
    own = new Map(
      fs
        .readFileSync('/proc/self/cgroup', 'utf8')
        .trim()
        .split('\n')
        .flatMap((l) => {
          const [, ctl, p] = l.split(':');
          return ctl.split(',').map((c) => [c, p] as [string, string]);
        }),
    );
  } catch {
    return { kind: 'none', why: 'no /proc/self/cgroup' };
  }
  const bases = {} as Record<Controller, string>;
  for (const c of CONTROLLERS) {
    const mount = path.join(ROOT, c);
    if (!fs.existsSync(path.join(mount, 'cgroup.procs')))
      return { kind: 'none', why: `the ${c} cgroup controller is not mounted` };
    const parent = path.join(mount, own.get(c) ?? '/');
    removeStaleGroups(parent);
    const base = path.join(parent, `pier-${process.pid}`);
    try {
      fs.mkdirSync(base, { recursive: true });
      fs.accessSync(base, fs.constants.W_OK);
    } catch (err) {
      return { kind: 'none', why: `cannot create cgroups under ${mount} (${(err as Error).message})` };
    }
    bases[c] = base;
  }
  return { kind: 'v1', bases };
}

/** Whether a process with this pid exists (EPERM: it exists under another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the empty groups an earlier Pier left behind (`pier-<pid>` of a process that is gone, killed before
 * it could clean up). A group that still holds a process cannot be removed, so nothing running is touched.
 */
function removeStaleGroups(parent: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^pier-(\d+)$/.exec(name);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    const dir = path.join(parent, name);
    try {
      for (const e of fs.readdirSync(dir, { withFileTypes: true }))
        if (e.isDirectory()) fs.rmdirSync(path.join(dir, e.name));
      fs.rmdirSync(dir);
    } catch {
      // Still in use or not ours to remove: left as it is.
    }
  }
}

export type AppCgroup = {
  /** The cgroup.procs files the app's first process writes its pid into before it starts bwrap. */
  procsFiles: string[];
  /** How many times the kernel's OOM killer struck in this group. */
  oomKills(): number;
  remove(): Promise<void>;
};

/** Creates the group of one app process with the plan's limits. */
export function createAppCgroup(mode: CgroupMode, name: string, limits: SandboxLimits): AppCgroup | null {
  if (mode.kind !== 'v1') return null;
  const id = `${name}-${++counter}`;
  const dirs = Object.fromEntries(
    CONTROLLERS.map((c) => {
      const d = path.join(mode.bases[c], id);
      fs.mkdirSync(d, { recursive: true });
      return [c, d];
    }),
  ) as Record<Controller, string>;
  const bytes = String(limits.memoryMb * 1024 * 1024);
  fs.writeFileSync(path.join(dirs.memory, 'memory.limit_in_bytes'), bytes);
  // Without swap accounting the limit could be dodged by swapping; set it when the kernel offers it.
  const memsw = path.join(dirs.memory, 'memory.memsw.limit_in_bytes');
  if (fs.existsSync(memsw)) fs.writeFileSync(memsw, bytes);
  fs.writeFileSync(path.join(dirs.pids, 'pids.max'), String(limits.pids));
  fs.writeFileSync(path.join(dirs.cpu, 'cpu.cfs_period_us'), '100000');
  fs.writeFileSync(path.join(dirs.cpu, 'cpu.cfs_quota_us'), String(limits.cpuPercent * 1000));
  return {
    procsFiles: CONTROLLERS.map((c) => path.join(dirs[c], 'cgroup.procs')),
    oomKills: () => {
      try {
        const m = /oom_kill (\d+)/.exec(
          fs.readFileSync(path.join(dirs.memory, 'memory.oom_control'), 'utf8'),
        );
        return m ? Number(m[1]) : 0;
      } catch {
        return 0;
      }
    },
    remove: async () => {
      // A group can only be removed once its last process is gone; the kernel may take a moment.
      for (const d of Object.values(dirs)) {
        for (let i = 0; i < 50; i++) {
          try {
            fs.rmdirSync(d);
            break;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      }
    },
  };
}

export function describeCgroups(mode: CgroupMode): string {
  return mode.kind === 'v1'
    ? 'cgroup v1: memory, processes and CPU are enforced per app by cgroups'
    : `no cgroups (${mode.why}): memory by Node's heap flag, processes by RLIMIT_NPROC (as root only), open files and file size by rlimits`;
}
