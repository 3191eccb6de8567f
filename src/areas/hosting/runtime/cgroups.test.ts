import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectCgroups } from './cgroups.ts';

// A Pier killed with SIGKILL cannot remove its `pier-<pid>` groups; the next start removes the empty ones.

const memoryParent = (): string | null => {
  const line = fs
    .readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes('memory'));
  return line ? path.join('/sys/fs/cgroup/memory', line.split(':')[2]!) : null;
};
const parent = fs.existsSync('/sys/fs/cgroup/memory/cgroup.procs') ? memoryParent() : null;
const writable = (() => {
  try {
    if (!parent) return false;
    fs.accessSync(parent, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!writable)('cgroups of an earlier Pier', () => {
  it('removes the empty groups of a Pier that is gone, and keeps those of a live one', () => {
    const gone = spawnSync('true').pid!;
    const stale = path.join(parent!, `pier-${gone}`);
    const live = path.join(parent!, `pier-${process.ppid}`);
    fs.mkdirSync(path.join(stale, 'app-1'), { recursive: true });
    fs.mkdirSync(live, { recursive: true });
    try {
      const mode = detectCgroups();
      expect(mode.kind).toBe('v1');
      expect(fs.existsSync(stale)).toBe(false);
      expect(fs.existsSync(live)).toBe(true);
      expect(fs.existsSync(path.join(parent!, `pier-${process.pid}`))).toBe(true);
    } finally {
      for (const d of [path.join(stale, 'app-1'), stale, live]) if (fs.existsSync(d)) fs.rmdirSync(d);
    }
  });
});
