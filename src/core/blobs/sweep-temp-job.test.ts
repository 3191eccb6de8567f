import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { restartableTestDb, testApp } from '../../../test/harness.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('blobs.sweep-temp job', () => {
  it('survives a restart: enqueued before the app stops, run after it is reopened on the same database', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-sweep-'));
    const tmp = path.join(dataDir, 'blobs', 'tmp');
    fs.mkdirSync(tmp, { recursive: true });
    const stale = path.join(tmp, 'abandoned.part');
    const fresh = path.join(tmp, 'uploading.part');
    fs.writeFileSync(stale, 'half an upload');
    fs.writeFileSync(fresh, 'still coming');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(stale, twoHoursAgo, twoHoursAgo);

    const store = await restartableTestDb();
    try {
      // First life: no worker role; the job is only queued.
      const db1 = await store.open();
      const first = await testApp({ db: db1, dataDir });
      await first.deps.jobs.start();
      const id = await first.deps.jobs.enqueue('blobs.sweep-temp', { olderThanMs: 3600_000 });
      expect(id).toBeTruthy();
      // @ts-expect-error the registry knows this job's payload
      await expect(first.deps.jobs.enqueue('blobs.sweep-temp', { olderThanMs: 'soon' })).rejects.toThrow();
      await first.deps.jobs.stop(1000);
      await first.close();
      await db1.close();
      expect(fs.existsSync(stale)).toBe(true);

      // Second life, worker role on: the queued job runs.
      const db2 = await store.open();
      const second = await testApp({ db: db2, dataDir, background: true });
      try {
        const end = Date.now() + 15_000;
        while (fs.existsSync(stale) && Date.now() < end) await sleep(100);
        expect(fs.existsSync(stale)).toBe(false);
        expect(fs.existsSync(fresh)).toBe(true);
        expect((await second.deps.jobs.boss.getJobById('blobs.sweep-temp', id!))?.state).toMatch(
          /active|completed/,
        );
        // The worker role also keeps the hourly schedule.
        expect(await second.deps.jobs.boss.getSchedules()).toMatchObject([{ name: 'blobs.sweep-temp' }]);
      } finally {
        await second.close();
        await db2.close();
      }
    } finally {
      await store.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000); // two PGlite opens from disk, each with migrations: slow on a busy machine
});
