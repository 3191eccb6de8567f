import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wireBrowser } from '../../../src/areas/webdata/index.ts';
import { closeSharedBrowserPool } from '../../../src/core/browser/shared.ts';
import { getCdn } from '../../cdn-kit.ts';
import type { TestApp } from '../../harness.ts';
import { seedV1Tenant } from '../../seed.ts';
import type { V1Tenant } from '../../v1-security.ts';
import { settled, webdataTestApp } from '../../webdata-kit.ts';
import { type Site, startSite } from '../../webdata-site.ts';

// Extraction `actions` and the screenshot format in real Chromium, on the local test site's /reveal page,
// whose paragraph appears (and whose background turns red) only after its button is clicked: the markdown
// and the screenshot are both taken after the click; typing fires the page's own input handler; a step
// that cannot be done fails the extraction with its number and why.

describe('web data extraction actions in Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let site: Site;
  let a: V1Tenant;

  beforeAll(async () => {
    site = await startSite();
    t = await webdataTestApp({ BROWSER_MAX_PAGES: '2', BROWSER_PAGE_TIMEOUT_MS: '120000' });
    wireBrowser(t.deps);
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await closeSharedBrowserPool();
    await site?.close();
  });

  const extract = async (body: Record<string, unknown>) => {
    const res = await t.v1('POST', '/webdata/extractions', a.live, {
      url: `${site.url}/reveal`,
      ...body,
    });
    expect(res.statusCode, res.body).toBe(200);
    return settled(t, a.live, `/webdata/extractions/${res.json().id}`, 4000);
  };
  // The colour of the picture's bottom-right pixel: the page's background.
  const corner = async (url: string) => {
    const bytes = (await getCdn(t, url)).rawPayload;
    const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
    const at = ((info.height - 1) * info.width + (info.width - 1)) * info.channels;
    return [data[at], data[at + 1], data[at + 2]];
  };

  it('clicks before the markdown and the screenshot are taken', async () => {
    const x = await extract({
      mode: 'markdown',
      formats: ['markdown', 'screenshot'],
      actions: [
        { type: 'click', selector: '#show' },
        { type: 'wait', selector: '#more p' },
      ],
    });
    expect(x.status, x.error).toBe('completed');
    expect(x.fetchedWith).toBe('browser');
    expect(x.markdown).toContain('The hidden part appears only after the click.');
    expect(x.screenshot).toMatchObject({ width: 1280, height: 800, truncated: false });
    expect(await corner(x.screenshot.url)).toEqual([220, 20, 20]);

    // The same page without the click: neither the text nor the colour.
    const before = await extract({ mode: 'markdown', formats: ['markdown', 'screenshot'] });
    expect(before.status, before.error).toBe('completed');
    expect(before.markdown).toContain('hides its best part');
    expect(before.markdown).not.toContain('The hidden part');
    expect(await corner(before.screenshot.url)).toEqual([255, 255, 255]);
  });

  it('a full-page screenshot is the whole page, cut at 16,384 px and saying so', async () => {
    const short = await extract({ mode: 'markdown', formats: ['screenshot@fullPage'] });
    expect(short.status, short.error).toBe('completed');
    expect(short.markdown).toBeNull();
    expect(short.screenshot).toMatchObject({ width: 1280, truncated: false });
    const tall = await extract({ url: `${site.url}/tall`, formats: ['screenshot@fullPage'] });
    expect(tall.status, tall.error).toBe('completed');
    expect(tall.screenshot).toMatchObject({ width: 1280, height: 16_384, truncated: true });
    const meta = await sharp((await getCdn(t, tall.screenshot.url)).rawPayload).metadata();
    expect([meta.width, meta.height]).toEqual([1280, 16_384]);
  });

  it('writes into a field, presses keys and scrolls', async () => {
    const x = await extract({
      mode: 'markdown',
      actions: [
        { type: 'write', selector: '#q', text: 'bean' },
        { type: 'click', selector: '#q' },
        { type: 'press', key: 'End' },
        { type: 'write', text: 's' },
        { type: 'scroll', direction: 'down' },
        { type: 'wait', milliseconds: 50 },
      ],
    });
    expect(x.status, x.error).toBe('completed');
    expect(x.markdown).toContain('You typed: beans');
  });

  it('a step that cannot be done fails the extraction, saying which and why', async () => {
    const x = await extract({
      mode: 'markdown',
      actions: [
        { type: 'click', selector: '#show' },
        { type: 'click', selector: '#no-such-button' },
      ],
    });
    expect(x.status).toBe('failed');
    expect(x.error).toContain("Action 2 (click): no visible element matched '#no-such-button'");
    expect(x.markdown).toBeNull();
  });

  it('a crawl with the screenshot format shoots every page it stores', async () => {
    const res = await t.v1('POST', '/webdata/crawl', a.live, {
      url: `${site.url}/`,
      maxDepth: 1,
      maxPages: 3,
      formats: ['markdown', 'screenshot'],
    });
    expect(res.statusCode, res.body).toBe(200);
    const c = await settled(t, a.live, `/webdata/crawl/${res.json().id}?includePages=true`, 4000);
    expect(c.status, c.error).toBe('completed');
    expect(c.pages).toHaveLength(3);
    for (const p of c.pages) {
      expect(p.screenshot).toMatchObject({ width: 1280, height: 800, truncated: false });
      expect(p.markdown).toBeTruthy();
      expect(await corner(p.screenshot.url)).toEqual([255, 255, 255]);
    }
  });
});
