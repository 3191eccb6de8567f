import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSharedBrowserPool } from '../../../src/core/browser/shared.ts';
import { listen, type Served, siteHandler, startTrap, type Trap } from '../../browser-site.ts';
import { getCdn } from '../../cdn-kit.ts';
import { type TestApp, testApp } from '../../harness.ts';
import { seedV1Tenant } from '../../seed.ts';
import type { V1Tenant } from '../../v1-security.ts';

// Screenshots end to end: the API queues, the worker renders in real Chromium behind the guard, the image
// lands in the CDN, and the pixels say the options worked. The site is on 127.0.0.2, opened with
// OUTBOUND_ALLOW as an operator would; 127.0.0.1 stays closed (the trap counts hits).

type Shot = {
  id: string;
  status: string;
  error: string | null;
  imageUrl: string | null;
  imageSize: number | null;
  imageWidth: number | null;
  imageHeight: number | null;
  format: string;
  deviceType: string;
  processingTimeMs: number | null;
};

describe('web data screenshots in Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let trap: Trap;
  let site: Served;
  const stats = { adHits: 0 };
  const results = new Map<string, Promise<{ shot: Shot; bytes: Buffer | null }>>();

  beforeAll(async () => {
    trap = await startTrap();
    site = await listen(siteHandler(trap.port, stats), '127.0.0.2');
    t = await testApp({
      background: true,
      env: {
        OUTBOUND_ALLOW: '127.0.0.2/32',
        V1_RATE_LIMIT_BURST: '1000000',
        V1_RATE_LIMIT_PER_SEC: '100000',
        BROWSER_MAX_PAGES: '2',
        // Generous: on a loaded shared machine a page can take far longer than the default 30 s.
        BROWSER_PAGE_TIMEOUT_MS: '120000',
      },
    });
    a = await seedV1Tenant(t.deps);
  });
  afterAll(async () => {
    await t?.close();
    await closeSharedBrowserPool();
    await site?.close();
    await trap?.close();
  });

  /** Queues a screenshot once and waits for its end; the image's bytes when it completed. */
  function shoot(name: string, body: Record<string, unknown>) {
    let p = results.get(name);
    if (!p) {
      p = (async () => {
        const res = await t.v1('POST', '/webdata/screenshots', a.live, body);
        expect(res.statusCode, res.body).toBe(200);
        const { id } = res.json();
        const end = Date.now() + 240_000;
        for (;;) {
          const shot = (await t.v1('GET', `/webdata/screenshots/${id}`, a.live)).json() as Shot;
          if (shot.status === 'completed' || shot.status === 'failed') {
            const bytes = shot.imageUrl ? (await getCdn(t, shot.imageUrl)).rawPayload : null;
            return { shot, bytes };
          }
          if (Date.now() > end) throw new Error(`${name} stuck: ${JSON.stringify(shot)}`);
          await new Promise((r) => setTimeout(r, 250));
        }
      })();
      results.set(name, p);
    }
    return p;
  }

  async function pixel(bytes: Buffer, x: number, y: number) {
    const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const i = (y * info.width + x) * info.channels;
    return [data[i]!, data[i + 1]!, data[i + 2]!];
  }

  const completed = async (name: string, body: Record<string, unknown>) => {
    const r = await shoot(name, body);
    expect(r.shot.status, `${name}: ${r.shot.error}`).toBe('completed');
    expect(r.bytes).not.toBeNull();
    return r as { shot: Shot; bytes: Buffer };
  };

  it('queues everything at once (the worker renders them two at a time)', async () => {
    const u = site.url;
    const all = {
      light: { url: `${u}/styled` },
      dark: { url: `${u}/styled`, darkMode: true },
      element: { url: `${u}/styled`, selector: '#box' },
      mobile: { url: `${u}/styled`, deviceType: 'mobile' },
      webpFull: { url: `${u}/styled`, format: 'webp', quality: 60, fullPage: true },
      jpeg: { url: `${u}/styled`, format: 'jpeg', quality: 70, viewportWidth: 640, viewportHeight: 480 },
      pdf: { url: `${u}/styled`, format: 'pdf' },
      noMatch: { url: `${u}/styled`, selector: '#nothing-here' },
      adShown: { url: `${u}/ad` },
      bannerShown: { url: `${u}/banner` },
      late: { url: `${u}/late`, waitForSelector: '#ready' },
      blocked: { url: `http://127.0.0.1:${trap.port}/` },
      missing: { url: `${u}/missing` },
    };
    await Promise.all(Object.entries(all).map(([k, v]) => shoot(k, v)));
    // Ads and banners blocked run after their unblocked twins, so the ad-hit count can be compared.
    const adHitsBefore = stats.adHits;
    await Promise.all([
      shoot('adBlocked', { url: `${u}/ad`, blockAds: true }),
      shoot('bannerBlocked', { url: `${u}/banner`, blockCookieBanners: true }),
    ]);
    expect(adHitsBefore).toBeGreaterThan(0);
    expect(stats.adHits).toBe(adHitsBefore);
  });

  it('desktop PNG: the viewport size, the stored asset is the image, the page is light', async () => {
    const { shot, bytes } = await completed('light', {});
    expect(shot).toMatchObject({ format: 'png', deviceType: 'desktop', imageWidth: 1280, imageHeight: 800 });
    expect(shot.imageSize).toBe(bytes.length);
    expect((await sharp(bytes).metadata()).format).toBe('png');
    expect(shot.processingTimeMs).toBeGreaterThan(0);
    expect(await pixel(bytes, 5, 5)).toEqual([255, 255, 255]);
  });

  it('darkMode: the page answers prefers-color-scheme: dark', async () => {
    const { bytes } = await completed('dark', {});
    const [r, g, b] = await pixel(bytes, 5, 5);
    expect(Math.max(r, g, b)).toBeLessThan(40);
  });

  it('selector: only the element, at its size', async () => {
    const { shot, bytes } = await completed('element', {});
    expect([shot.imageWidth, shot.imageHeight]).toEqual([200, 100]);
    expect(await pixel(bytes, 100, 50)).toEqual([0, 170, 0]);
  });

  it('a selector that matches nothing fails with a reason', async () => {
    const { shot } = await shoot('noMatch', {});
    expect(shot.status).toBe('failed');
    expect(shot.error).toMatch(/No element .* '#nothing-here'/);
    expect(shot.imageUrl).toBeNull();
  });

  it('mobile: the phone width at its pixel ratio', async () => {
    const { shot } = await completed('mobile', {});
    expect(shot.deviceType).toBe('mobile');
    expect(shot.imageWidth).toBe(390 * 3);
    // 664 CSS px at 3×, give or take Chromium's rounding of the last device pixel.
    expect(Math.abs(shot.imageHeight! - 664 * 3)).toBeLessThanOrEqual(1);
  });

  it('webp full page, jpeg with a custom viewport, pdf', async () => {
    const webp = await completed('webpFull', {});
    expect((await sharp(webp.bytes).metadata()).format).toBe('webp');
    expect(webp.shot.imageHeight).toBeGreaterThan(2400);
    const jpeg = await completed('jpeg', {});
    expect((await sharp(jpeg.bytes).metadata()).format).toBe('jpeg');
    expect([jpeg.shot.imageWidth, jpeg.shot.imageHeight]).toEqual([640, 480]);
    const pdf = await completed('pdf', {});
    expect(pdf.bytes.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('blockAds: the ad is neither fetched nor shown', async () => {
    const shown = await completed('adShown', {});
    expect(await pixel(shown.bytes, 10, 10)).toEqual([255, 0, 0]);
    const blocked = await completed('adBlocked', {});
    expect(await pixel(blocked.bytes, 10, 10)).toEqual([255, 255, 255]);
  });

  it('blockCookieBanners: the consent banner is declined and gone', async () => {
    const shown = await completed('bannerShown', {});
    expect(await pixel(shown.bytes, 640, 790)).toEqual([0, 0, 255]);
    const blocked = await completed('bannerBlocked', {});
    expect(await pixel(blocked.bytes, 640, 790)).not.toEqual([0, 0, 255]);
  });

  it('waitForSelector waits for what a script paints after load', async () => {
    const { bytes } = await completed('late', {});
    expect(await pixel(bytes, 5, 5)).toEqual([0, 0, 0]);
  });

  it('a private address fails as blocked without a connection; an HTTP error fails with its status', async () => {
    const { shot } = await shoot('blocked', {});
    expect(shot.status).toBe('failed');
    expect(shot.error).toMatch(/loopback/);
    expect(trap.hits).toEqual([]);
    const missing = await shoot('missing', {});
    expect(missing.shot.status).toBe('failed');
    expect(missing.shot.error).toMatch(/HTTP status 404/);
  });

  it('deleting a screenshot deletes its image', async () => {
    const { shot } = await completed('light', {});
    expect((await getCdn(t, shot.imageUrl!)).statusCode).toBe(200);
    expect((await t.v1('DELETE', `/webdata/screenshots/${shot.id}`, a.live)).json()).toEqual({
      success: true,
    });
    expect((await getCdn(t, shot.imageUrl!)).statusCode).toBe(404);
  });
});
