import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropAppDatabases, type TestApp, testApp } from '../../../../test/harness.ts';
import { seedOrg, seedProject } from '../../../../test/seed.ts';
import { AppDbServers, projectDir, provisionAppDatabase } from './app-databases.ts';
import { AppLogWriter } from './app-logs.ts';
import { detectCgroups } from './cgroups.ts';
import { detectDiskQuota } from './disk-quota.ts';
import { Supervisor } from './supervisor.ts';
import { deployments } from './tables.ts';

// The disk quota's fallback (decision 068): where /data cannot be an image (Pier not root, no mkfs.ext4, no loop
// devices), the supervisor measures each running app's /data and stops one that is over its plan's disk, with
// the reason on its deployment. Forced here even as root, by handing the supervisor the fallback's mode.

let t: TestApp;
let dbs: AppDbServers;
let logs: AppLogWriter;
let supervisor: Supervisor | undefined;

beforeAll(async () => {
  t = await testApp();
  dbs = new AppDbServers(t.deps);
  logs = new AppLogWriter(t.deps);
  if (!t.deps.config.databaseUrl) await dbs.template();
}, 120_000);

afterAll(async () => {
  await supervisor?.close();
  await logs?.close();
  await dbs?.closeAll();
  if (t) await dropAppDatabases(t.deps);
  await t?.close();
});

describe('the usage check of /data (the disk quota fallback)', () => {
  it('is the mode when Pier does not run as root', () => {
    expect(detectDiskQuota(1000)).toEqual({ kind: 'usage-check', why: 'Pier does not run as root' });
  });

  it("stops an app whose /data is over its plan's disk and says why on its deployment", async () => {
    const { org, owner } = await seedOrg(t.deps); // free plan: 1,024 MB
    const p = await seedProject(t.deps, org);
    await provisionAppDatabase(t.deps, p.id);
    const dir = path.join(projectDir(t.deps, p.id), 'releases', 'r1');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'server.js'),
      "require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');",
    );
    const manifest = { type: 'node' as const, start: 'node server.js', healthPath: '/', spa: false };
    const now = new Date();
    const [d] = await t.deps.db.orm
      .insert(deployments)
      .values({
        projectId: p.id,
        orgId: org.id,
        status: 'live',
        artifactKey: 'test',
        manifest,
        createdBy: owner.user.id,
        createdAt: now,
        uploadExpiresAt: now,
        liveAt: now,
      })
      .returning();
    const sandbox = detectCgroups();
    supervisor = new Supervisor(t.deps, dbs, logs, {
      healthTimeoutMs: 15_000,
      handoff: true,
      sandbox,
      disk: { kind: 'usage-check', why: 'forced by the test' },
      diskCheckMs: 100,
    });
    await supervisor.activate({ projectId: p.id, slug: p.slug, deploymentId: d!.id, dir, manifest });
    const status = async () =>
      (await t.deps.db.orm.select().from(deployments).where(eq(deployments.id, d!.id)))[0]!;
    // Under the quota, several checks leave it running.
    await new Promise((r) => setTimeout(r, 500));
    expect(supervisor.lookup(p.slug)?.kind).toBe('node');
    expect((await status()).status).toBe('live');
    // What the app would have written: allocated blocks count, as on a disk (fallocate writes none of them).
    execFileSync('/usr/bin/fallocate', [
      '-l',
      `${1030 * 1024 * 1024}`,
      path.join(projectDir(t.deps, p.id), 'data', 'big'),
    ]);
    try {
      const deadline = Date.now() + 10_000;
      while ((await status()).status === 'live' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      const row = await status();
      expect(row.status).toBe('crashed');
      expect(row.errorMessage).toMatch(
        /^Stopped: \/data uses 103\d MB, over the plan's disk quota of 1024 MB\. Free space in \/data, then deploy again or run 'pier restart --project /,
      );
      expect(supervisor.lookup(p.slug)).toBeNull();
    } finally {
      fs.rmSync(path.join(projectDir(t.deps, p.id), 'data', 'big'), { force: true });
    }
  }, 60_000);
});
