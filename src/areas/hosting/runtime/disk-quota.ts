import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// The size quota of an app's writable folder (/data), decision 068: where Pier runs as root with mkfs.ext4
// and loop devices, the folder is a sparse ext4 image of the plan's size, loop-mounted on
// DATA_DIR/apps/<project>/data — a write past it gets ENOSPC from the kernel, as on a real disk. Elsewhere
// the fallback is a usage check: the supervisor measures the folder and stops an app that is over.

export type DiskQuotaMode = { kind: 'image' } | { kind: 'usage-check'; why: string };

const MKFS = '/usr/sbin/mkfs.ext4';

/** Whether images can be used here: decided once at start-up and logged. `uid` lets a test take the non-root path. */
export function detectDiskQuota(uid = process.getuid?.()): DiskQuotaMode {
  if (uid !== 0) return { kind: 'usage-check', why: 'Pier does not run as root' };
  if (!fs.existsSync(MKFS)) return { kind: 'usage-check', why: 'mkfs.ext4 is not installed (e2fsprogs)' };
  if (!fs.existsSync('/dev/loop-control')) return { kind: 'usage-check', why: 'no loop devices' };
  return { kind: 'image' };
}

export function isMountPoint(dir: string): boolean {
  const real = fs.existsSync(dir) ? fs.realpathSync(dir) : dir;
  // Field 5 of mountinfo is the mount point (spaces escaped as \040).
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4]?.replace(/\\040/g, ' ') === real);
}

/**
 * Makes `dataDir` an ext4 image of `sizeMb` (creating it the first time and moving what the folder held
 * into it); a no-op when it is mounted already. Throws when mkfs or mount fails (the caller falls back).
 */
export function mountDataImage(dataDir: string, sizeMb: number): void {
  if (isMountPoint(dataDir)) return;
  const image = `${dataDir}.img`;
  if (!fs.existsSync(image)) {
    const tmp = `${image}.tmp`;
    fs.closeSync(fs.openSync(tmp, 'w'));
    fs.truncateSync(tmp, sizeMb * 1024 * 1024); // sparse: takes room only as the app writes
    // -m 0: no blocks reserved for root (the app never is); quiet, no prompts.
    execFileSync(MKFS, ['-q', '-F', '-m', '0', tmp], { stdio: 'ignore' });
    fs.renameSync(tmp, image);
  } else {
    const have = fs.statSync(image).size;
    // A plan change: grow the image (ext4 grows online); shrinking is not done, the app keeps its room.
    if (have < sizeMb * 1024 * 1024) {
      fs.truncateSync(image, sizeMb * 1024 * 1024);
      execFileSync('/usr/sbin/e2fsck', ['-f', '-y', image], { stdio: 'ignore' });
      execFileSync('/usr/sbin/resize2fs', [image], { stdio: 'ignore' });
    }
  }
  const old = fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0 ? `${dataDir}.before-quota` : null;
  if (old) fs.renameSync(dataDir, old);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  execFileSync('/usr/bin/mount', ['-o', 'loop,nosuid,nodev', image, dataDir], { stdio: 'ignore' });
  fs.rmSync(path.join(dataDir, 'lost+found'), { recursive: true, force: true });
  if (old) {
    // What the app wrote before quotas existed moves in (cp keeps owners and modes).
    execFileSync('/bin/cp', ['-a', `${old}/.`, dataDir], { stdio: 'ignore' });
    fs.rmSync(old, { recursive: true, force: true });
  }
}

/** Unmounts the image (stopping the app for good, destroying the project, or Pier shutting down). */
export function unmountDataImage(dataDir: string): void {
  if (!fs.existsSync(dataDir) || !isMountPoint(dataDir)) return;
  try {
    execFileSync('/usr/bin/umount', [dataDir], { stdio: 'ignore' });
  } catch {
    // Still busy (a process on its way out): detach now, the kernel frees it when the last user goes.
    execFileSync('/usr/bin/umount', ['-l', dataDir], { stdio: 'ignore' });
  }
}

/** Bytes the folder's files take (the fallback's measure), not following links. */
export function folderBytes(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else
        try {
          total += fs.lstatSync(p).blocks * 512;
        } catch {
          // gone meanwhile
        }
    }
  };
  walk(dir);
  return total;
}
