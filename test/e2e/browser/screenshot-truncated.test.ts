import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSharedBrowserPool } from '../../../src/core/browser/shared.ts';
import { listen, type Served } from '../../browser-site.ts';
import { getCdn } from '../../cdn-kit.ts';
import { type TestApp, testApp } from '../../harness.ts';
import { seedV1Tenant } from '../../seed.ts';
import type { V1Tenant } from '../../v1-security.ts';

// A full page taller than Chromium's capture limit (16,384 device px) is cut there and says so: truncated
// true with the page's whole height; a page that fits says truncated false with its height. Real Chromium.

const page = (height: number) =>
  `<!doctype html><html><head><style>html,body{margin:0}</style></head><body>` +
  `<div style="height:${height}px;background:linear-gradient(#fff,#036)"></div></body></html>`;

describe('web data screenshots: a full page cut at the limit says so', { timeout: 300_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let site: Served;

  beforeAll(async () => {
    site = await listen((req, res) => {
      const height = req.url === '/tall' ? 20_000 : 1_500;
      res.writeHead(200, { 'content-type': 'text/html' }).end(page(height));
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

  const shoot = async (body: Record<string, unknown>) => {
    const res = await t.v1('POST', '/webdata/screenshots', a.live, body);
    expect(res.statusCode, res.body).toBe(200);
    const end = Date.now() + 240_000;
    for (;;) {
      const got = await t.v1('GET', `/webdata/screenshots/${res.json().id}`, a.live);
      expect(got.statusCode, got.body).toBe(200);
      const shot = got.json();
      if (shot.status === 'completed' || shot.status === 'failed') return shot;
      if (Date.now() > end) throw new Error(`stuck: ${JSON.stringify(shot)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  it('a 20,000 px page: truncated at 16,384 px with its full height; a 1,500 px page: whole', async () => {
    const [tall, short, tallPdf, viewport] = await Promise.all([
      shoot({ url: `${site.url}/tall`, fullPage: true }),
      shoot({ url: `${site.url}/short`, fullPage: true }),
      shoot({ url: `${site.url}/tall`, fullPage: true, format: 'pdf' }),
      shoot({ url: `${site.url}/tall` }),
    ]);
    expect(tall, tall.error).toMatchObject({
      status: 'completed',
      truncated: true,
      pageHeight: 20_000,
      imageHeight: 16_384,
    });
    const bytes = (await getCdn(t, tall.imageUrl)).rawPayload;
    expect((await sharp(bytes).metadata()).height).toBe(16_384);
    expect(short).toMatchObject({
      status: 'completed',
      truncated: false,
      pageHeight: 1_500,
      imageHeight: 1_500,
    });
    expect(tallPdf).toMatchObject({ status: 'completed', truncated: true, pageHeight: 20_000 });
    // Not a full-page capture: the viewport is what was asked for, nothing was cut.
    expect(viewport).toMatchObject({
      status: 'completed',
      truncated: false,
      pageHeight: null,
      imageHeight: 800,
    });
  });
});
