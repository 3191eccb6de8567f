import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { expectJobRoutesSecured, settled, webdataTestApp } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';
import type { Environment } from '../../core/auth/caller.ts';
import type { ManualClock } from '../../core/clock.ts';
import { storeAsset } from '../cdn/index.ts';
import { plugInto } from './plugins.ts';
import { slotOf, tickSchedules } from './schedules.ts';
import { webdataScheduleRuns } from './tables.ts';

// Batch jobs (counts that add up, cancel leaves pending URLs unprocessed) and schedules (one run per slot
// even with ticks racing, change detection against the previous run, toggle, the runs list), through the
// API with the job worker running, against the local test site.

describe('web data batches and schedules', { timeout: 90_000 }, () => {
  let t: TestApp;
  let site: Site;
  let slow: Site;
  let a: V1Tenant;

  beforeAll(async () => {
    site = await startSite({ articles: 3 });
    slow = await startSite({ articles: 3, latencyMs: 300 });
    t = await webdataTestApp({ WEBDATA_FETCH_TIMEOUT_MS: '3000' });
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
    await slow?.close();
  });

  const batchDone = (id: string) => settled(t, a.live, `/webdata/batch/${id}`);

  it('runs a batch of extractions whose counts add up', async () => {
    const urls = ['/articles/1', '/docs', '/missing', '/garbage'].map((p) => `${site.url}${p}`);
    const res = await t.v1('POST', '/webdata/batch/extractions', a.live, {
      urls,
      config: { mode: 'markdown' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'pending', totalUrls: 4 });
    const b = await batchDone(res.json().id);
    expect(b).toMatchObject({
      type: 'extraction',
      status: 'completed',
      totalUrls: 4,
      processedUrls: 4,
      successfulUrls: 2,
      failedUrls: 2,
      progress: 100,
    });
    expect(b.items.map((i: { status: string }) => i.status)).toEqual([
      'completed',
      'completed',
      'failed',
      'failed',
    ]);
    const x = (await t.v1('GET', `/webdata/extractions/${b.items[1].resultId}`, a.live)).json();
    expect(x.markdown).toContain('| Name | Type | Default |');
    expect(b.items[2].error).toBe('HTTP status: the page answered 404.');
    // The item carries the code its extraction record carries, so a program branches without a second read.
    expect(b.items.map((i: { errorCode: string | null }) => i.errorCode)).toEqual([
      null,
      null,
      'REMOTE_HTTP_ERROR',
      'PAGE_UNUSABLE',
    ]);
    const failed = (await t.v1('GET', `/webdata/extractions/${b.items[2].resultId}`, a.live)).json();
    expect(failed.errorCode).toBe(b.items[2].errorCode);
    const again = await t.v1('POST', `/webdata/batch/${b.id}/cancel`, a.live);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('BATCH_NOT_CANCELLABLE');
  });

  it('cancel leaves the pending URLs unprocessed and ends the batch cancelled', async () => {
    const urls = Array.from({ length: 12 }, (_, i) => `${slow.url}/articles/1?n=${i}`);
    const res = await t.v1('POST', '/webdata/batch/extractions', a.live, { urls, config: { mode: 'raw' } });
    const id = res.json().id;
    for (let i = 0; i < 200; i++) {
      const b = (await t.v1('GET', `/webdata/batch/${id}`, a.live)).json();
      if (b.processedUrls >= 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await t.v1('POST', `/webdata/batch/${id}/cancel`, a.live)).json()).toEqual({ success: true });
    // URLs already in flight finish and are counted; wait for them (the machine may be slow), then check.
    let b = (await t.v1('GET', `/webdata/batch/${id}`, a.live)).json();
    for (let i = 0; i < 400 && b.items.some((it: { status: string }) => it.status === 'processing'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      b = (await t.v1('GET', `/webdata/batch/${id}`, a.live)).json();
    }
    expect(b.status).toBe('cancelled');
    expect(b.processedUrls).toBeLessThan(12);
    expect(b.processedUrls).toBe(b.successfulUrls + b.failedUrls);
    const byStatus = (s: string) => b.items.filter((i: { status: string }) => i.status === s).length;
    expect(byStatus('cancelled')).toBe(12 - b.processedUrls);
    expect(byStatus('pending') + byStatus('processing')).toBe(0);
    expect(slow.hits.get('/articles/1')).toBe(b.processedUrls);
  });

  it('rejects bad batches and hides other tenants’ ones', async () => {
    for (const body of [
      { urls: [] },
      { urls: ['ftp://x/'] },
      { urls: [site.url], config: { mode: 'schema' } },
      { urls: [site.url], config: { mode: 'nope' } },
    ]) {
      expect(
        (await t.v1('POST', '/webdata/batch/extractions', a.live, body)).statusCode,
        JSON.stringify(body),
      ).toBe(400);
    }
    const id = (
      await t.v1('POST', '/webdata/batch/extractions', a.live, { urls: [`${site.url}/about`] })
    ).json().id;
    await batchDone(id);
    await expectJobRoutesSecured(t, a, 'BATCH_NOT_FOUND', [
      ['GET', `/webdata/batch/${id}`],
      ['POST', `/webdata/batch/${id}/cancel`],
    ]);
  });

  const runs = async (id: string, q = '') =>
    (await t.v1('GET', `/webdata/schedules/${id}/runs${q}`, a.live)).json();

  it('runs a schedule once per slot and scores changes against the previous run', async () => {
    const clock = t.clock as ManualClock;
    site.setPage(
      '/watch',
      '<html><head><title>Price</title></head><body><main><p>The oak chair costs 149 euros. It ships in two days from our shop in town.</p></main></body></html>',
    );
    const created = await t.v1('POST', '/webdata/schedules', a.live, {
      name: 'Chair price',
      url: `${site.url}/watch`,
      type: 'extraction',
      frequency: 'daily',
      config: { mode: 'markdown' },
      detectChanges: true,
      changeThreshold: 0.05,
    });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().id;
    expect(created.json()).toMatchObject({ isActive: true, frequency: 'daily', detectChanges: true });

    await Promise.all([tickSchedules(t.deps), tickSchedules(t.deps), tickSchedules(t.deps)]);
    let list = await runs(id);
    expect(list.items).toHaveLength(1);
    // The first run has nothing to compare with: it is the baseline, not "unchanged".
    expect(list.items[0]).toMatchObject({
      status: 'completed',
      trigger: 'schedule',
      baseline: true,
      changed: null,
      changeScore: null,
    });

    clock.advance(24 * 3600_000);
    site.setPage(
      '/watch',
      '<html><head><title>Price</title></head><body><main><p>The oak chair costs 199 euros. It ships in five days from our shop in town.</p></main></body></html>',
    );
    await tickSchedules(t.deps);
    list = await runs(id);
    expect(list.items).toHaveLength(2);
    expect(list.items[0].baseline).toBe(false);
    expect(list.items[0].changed).toBe(true);
    expect(list.items[0].changeScore).toBeGreaterThan(0.05);
    expect(list.items[0].diff).toContain('+The oak chair costs 199 euros');

    clock.advance(24 * 3600_000);
    await tickSchedules(t.deps);
    list = await runs(id);
    expect(list.items[0]).toMatchObject({ changed: false, changeScore: 0, diff: null });

    const first = await runs(id, '?limit=2');
    expect(first.items).toHaveLength(2);
    const rest = await runs(id, `?limit=2&cursor=${first.nextCursor}`);
    expect(rest.items).toHaveLength(1);
    expect(rest.nextCursor).toBeNull();
    expect(new Date(rest.items[0].slot) < new Date(first.items[1].slot)).toBe(true);

    expect((await t.v1('POST', `/webdata/schedules/${id}/toggle`, a.live)).json()).toEqual({
      isActive: false,
    });
    clock.advance(24 * 3600_000);
    await tickSchedules(t.deps);
    expect((await runs(id)).items).toHaveLength(3);
    expect((await t.v1('POST', `/webdata/schedules/${id}/toggle`, a.live)).json()).toEqual({
      isActive: true,
    });
    await expectJobRoutesSecured(t, a, 'SCHEDULE_NOT_FOUND', [
      ['POST', `/webdata/schedules/${id}/toggle`],
      ['GET', `/webdata/schedules/${id}/runs`],
    ]);
    expect((await t.v1('DELETE', `/webdata/schedules/${id}`, a.live)).json()).toEqual({ success: true });
  });

  it('closes a run left processing by a stopped worker, and never reruns its slot', async () => {
    const clock = t.clock as ManualClock;
    const id = (
      await t.v1('POST', '/webdata/schedules', a.live, {
        name: 'Weekly',
        url: `${site.url}/about`,
        type: 'extraction',
        frequency: 'weekly',
      })
    ).json().id;
    // What a worker that died mid-run leaves behind: the slot's row, still processing.
    await t.deps.db.orm.insert(webdataScheduleRuns).values({
      scheduleId: id,
      slot: slotOf('weekly', clock.now()),
      status: 'processing',
      startedAt: clock.now(),
    });
    clock.advance(2 * 3600_000);
    await tickSchedules(t.deps);
    const list = await runs(id);
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({
      status: 'failed',
      error: 'The run was interrupted (its worker stopped).',
    });
    await t.v1('DELETE', `/webdata/schedules/${id}`, a.live);
  });

  it('a screenshot schedule scores the changed share of pixels and names the changed regions', async () => {
    const clock = t.clock as ManualClock;
    // The capture is a stand-in (Chromium runs in test/e2e/browser/screenshot-jobs.test.ts): a white picture,
    // then the same with a 64×32 red box at (100, 40). The comparison reads both back from the CDN.
    let box = false;
    const calls: string[] = [];
    plugInto(t.deps, {
      screenshot: async (deps, scope, url) => {
        calls.push(url);
        const base = sharp({ create: { width: 320, height: 200, channels: 3, background: '#ffffff' } });
        const red = await sharp({
          create: { width: 64, height: 32, channels: 3, background: '#ff0000' },
        })
          .png()
          .toBuffer();
        const bytes = await (box ? base.composite([{ input: red, left: 100, top: 40 }]) : base)
          .png()
          .toBuffer();
        const asset = await storeAsset(deps, {
          orgId: scope.orgId,
          environment: scope.environment as Environment,
          bytes,
          filename: 'shot.png',
          mimeType: 'image/png',
          folder: 'webdata/screenshots',
          origin: 'derived',
        });
        return { resultId: null, ok: true, content: asset.assetId };
      },
    });
    try {
      const id = (
        await t.v1('POST', '/webdata/schedules', a.live, {
          name: 'Shot',
          url: site.url,
          type: 'screenshot',
          frequency: 'hourly',
          config: { fullPage: true, darkMode: true },
          detectChanges: true,
          changeThreshold: 0.01,
        })
      ).json().id;
      await tickSchedules(t.deps);
      clock.advance(3600_000);
      await tickSchedules(t.deps);
      let list = await runs(id);
      expect(list.items[0]).toMatchObject({
        status: 'completed',
        changed: false,
        changeScore: 0,
        regions: null,
      });
      box = true;
      clock.advance(3600_000);
      await tickSchedules(t.deps);
      list = await runs(id);
      expect(list.items).toHaveLength(3);
      expect(list.items[0].changed).toBe(true);
      expect(list.items[0].changeScore).toBeCloseTo((64 * 32) / (320 * 200), 3);
      // The region is the box grown to the 32 px grid it touches.
      expect(list.items[0].regions).toEqual([{ x: 96, y: 32, width: 96, height: 64 }]);
      expect(calls).toEqual([site.url, site.url, site.url]);
      await t.v1('DELETE', `/webdata/schedules/${id}`, a.live);
    } finally {
      plugInto(t.deps, { screenshot: undefined });
    }
  });

  it('refuses a screenshot batch or schedule whose config a screenshot would refuse', async () => {
    for (const config of [
      { format: 'gif' },
      { format: 'png', quality: 50 },
      { url: site.url },
      { nope: 1 },
    ]) {
      const batch = await t.v1('POST', '/webdata/batch/screenshots', a.live, { urls: [site.url], config });
      expect(batch.statusCode, JSON.stringify(config)).toBe(400);
      expect(batch.json().error.code).toBe('VALIDATION_ERROR');
      const sched = await t.v1('POST', '/webdata/schedules', a.live, {
        name: 'x',
        url: site.url,
        type: 'screenshot',
        config,
      });
      expect(sched.statusCode, JSON.stringify(config)).toBe(400);
    }
  });

  it('rejects bad schedules', async () => {
    const ok = { name: 'x', url: site.url, type: 'extraction' };
    for (const body of [
      {},
      { ...ok, frequency: 'minutely' },
      { ...ok, changeThreshold: 2 },
      { ...ok, type: 'video' },
      { ...ok, config: { mode: 'schema' } },
      { ...ok, name: '' },
    ]) {
      expect((await t.v1('POST', '/webdata/schedules', a.live, body)).statusCode, JSON.stringify(body)).toBe(
        400,
      );
    }
  });
});
