import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  detectDiskQuota,
  folderBytes,
  isMountPoint,
  mountDataImage,
  unmountDataImage,
} from './disk-quota.ts';

// The disk quota of /data (decision 068): an image of the plan's size mounted on the data folder, keeping
// what the folder held; a write past it fails with ENOSPC. The usage check's measure counts allocated bytes.

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-disk-quota-'));
afterAll(() => {
  unmountDataImage(path.join(root, 'data'));
  fs.rmSync(root, { recursive: true, force: true });
});

describe('disk quota', () => {
  it.skipIf(detectDiskQuota().kind !== 'image')(
    'mounts an image of the given size on the folder, keeps its files, and ENOSPC past it',
    () => {
      const data = path.join(root, 'data');
      fs.mkdirSync(data);
      fs.writeFileSync(path.join(data, 'kept.txt'), 'from before');
      mountDataImage(data, 8);
      expect(isMountPoint(data)).toBe(true);
      mountDataImage(data, 8); // idempotent
      expect(fs.readFileSync(path.join(data, 'kept.txt'), 'utf8')).toBe('from before');
      expect(fs.existsSync(path.join(data, 'lost+found'))).toBe(false);
      const fd = fs.openSync(path.join(data, 'big'), 'w');
      const chunk = Buffer.alloc(1024 * 1024, 1);
      let written = 0;
      let code = '';
      try {
        for (let i = 0; i < 20; i++) written += fs.writeSync(fd, chunk);
      } catch (err) {
        code = (err as NodeJS.ErrnoException).code ?? '';
      } finally {
        fs.closeSync(fd);
      }
      expect(code).toBe('ENOSPC');
      expect(written).toBeLessThanOrEqual(8 * 1024 * 1024);
      expect(written).toBeGreaterThan(5 * 1024 * 1024);
      unmountDataImage(data);
      expect(isMountPoint(data)).toBe(false);
      // The files live in the image: mounted again, they are back.
      mountDataImage(data, 8);
      expect(fs.readFileSync(path.join(data, 'kept.txt'), 'utf8')).toBe('from before');
    },
  );

  it('measures a folder by the bytes its files take', () => {
    const d = path.join(root, 'measure');
    fs.mkdirSync(path.join(d, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(d, 'a'), Buffer.alloc(100_000));
    fs.writeFileSync(path.join(d, 'sub', 'b'), Buffer.alloc(300_000, 1));
    expect(folderBytes(d)).toBeGreaterThanOrEqual(400_000);
    expect(folderBytes(path.join(d, 'missing'))).toBe(0);
  });
});
