import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tickSchedules } from '../../../src/areas/webdata/schedules.ts';
import { closeSharedBrowserPool } from '../../../src/core/browser/shared.ts';
import type { ManualClock } from '../../../src/core/clock.ts';
import { listen, type Served } from '../../browser-site.ts';
import { getCdn } from '../../cdn-kit.ts';
import { type TestApp, testApp } from '../../harness.ts';
import { seedV1Tenant } from '../../seed.ts';
import type { V1Tenant } from '../../v1-security.ts';

// Screenshots as a batch job and as a schedule, in real Chromium: every URL of a batch becomes a screenshot
// that reads like one made alone, the counts add up, and a scheduled screenshot whose page changed says
// so with the changed region. The site is on 127.0.0.2 (opened with OUTBOUND_ALLOW); 127.0.0.1 is closed.

describe('web data screenshot batches and schedules in Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let site: Served;
  let banner = false;

  beforeAll(async () => {
    site = await listen((req, res) => {
      res.setHeader('content-type', 'text/html');
      const box = banner
        ? '<div style="position:absolute;left:0;top:0;width:300px;height:60px;background:#c00"></div>'
        : '';
      res.end(
        `<!doctype html><html><head><style>body{margin:0;background:#fff}</style></head><body>${box}<p style="margin-top:200px">Page ${req.url}</p></body></html>`,
      );
    }, '127.0.0.2');
    t = await testApp({
      background: true,
      env: {
        OUTBOUND_ALLOW: '127.0.0.2/32',
        V1_RATE_LIMIT_BURST: '1000000',
        V1_RATE_LIMIT_PER_SEC: '100000',
        BROWSER_MAX_PAGES: '2',
        BROWSER_PAGE_TIMEOUT_MS: '120000',
      },
    });
    a = await seedV1Tenant(t.deps);
  });
  afterAll(async () => {
    await t?.close();
    await closeSharedBrowserPool();
    await site?.close();
  });

  it('a screenshot batch renders each URL, stores the images and counts what failed', async () => {
    const urls = [`${site.url}/one`, `${site.url}/two`, 'http://127.0.0.1:9/closed'];
    const res = await t.v1('POST', '/webdata/batch/screenshots', a.live, {
      urls,
      config: { format: 'jpeg', quality: 70, viewportWidth: 640, viewportHeight: 400 },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'pending', totalUrls: 3 });
    let b = (await t.v1('GET', `/webdata/batch/${res.json().id}`, a.live)).json();
    for (let i = 0; i < 2000 && ['pending', 'processing'].includes(b.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      b = (await t.v1('GET', `/webdata/batch/${b.id}`, a.live)).json();
    }
    expect(b).toMatchObject({
      type: 'screenshot',
      status: 'completed',
      processedUrls: 3,
      successfulUrls: 2,
      failedUrls: 1,
      progress: 100,
    });
    expect(b.items.map((i: { status: string }) => i.status)).toEqual(['completed', 'completed', 'failed']);
    expect(b.items[2].error).toMatch(/does not fetch .*loopback/);
    for (const item of b.items.slice(0, 2)) {
      const shot = (await t.v1('GET', `/webdata/screenshots/${item.resultId}`, a.live)).json();
      expect(shot).toMatchObject({ status: 'completed', format: 'jpeg', imageWidth: 640, imageHeight: 400 });
      const bytes = (await getCdn(t, shot.imageUrl)).rawPayload;
      expect((await sharp(bytes).metadata()).format).toBe('jpeg');
    }
  });

  it('a scheduled screenshot notices the page changed and where', async () => {
    const clock = t.clock as ManualClock;
    const id = (
      await t.v1('POST', '/webdata/schedules', a.live, {
        name: 'Home picture',
        url: `${site.url}/home`,
        type: 'screenshot',
        frequency: 'daily',
        config: { viewportWidth: 800, viewportHeight: 600 },
        detectChanges: true,
        changeThreshold: 0.01,
      })
    ).json().id;
    await tickSchedules(t.deps);
    clock.advance(24 * 3600_000);
    await tickSchedules(t.deps);
    const runs = async () => (await t.v1('GET', `/webdata/schedules/${id}/runs`, a.live)).json();
    let list = await runs();
    expect(list.items.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed']);
    expect(list.items[0]).toMatchObject({ changed: false, changeScore: 0, regions: null });

    banner = true;
    clock.advance(24 * 3600_000);
    await tickSchedules(t.deps);
    list = await runs();
    expect(list.items[0].status).toBe('completed');
    expect(list.items[0].changed).toBe(true);
    // A 300×60 red bar on an 800×600 page: 3.75 % of the pixels, in the top-left corner.
    expect(list.items[0].changeScore).toBeGreaterThan(0.03);
    expect(list.items[0].changeScore).toBeLessThan(0.05);
    expect(list.items[0].regions[0]).toMatchObject({ x: 0, y: 0 });
    expect(list.items[0].regions[0].width).toBeGreaterThanOrEqual(300);
    const shot = (await t.v1('GET', `/webdata/screenshots/${list.items[0].resultId}`, a.live)).json();
    expect(shot).toMatchObject({ status: 'completed', imageWidth: 800, imageHeight: 600 });
  });
});
