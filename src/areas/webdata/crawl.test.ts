import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { expectJobRoutesSecured, settled, webdataTestApp } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';

// Crawls through the API with the job worker running, against the local test site: breadth-first order,
// maxDepth and maxPages exact, robots.txt (disallowed path, Crawl-delay → one request at a time),
// canonical de-duplication, formats, the pages' own cursor, cancel, a failing start page, bad input and
// tenant isolation.

type Page = {
  url: string;
  depth: number;
  title: string | null;
  markdown: string | null;
  html?: string;
  rawHtml?: string;
  links?: string[];
  images?: string[];
  screenshot?: unknown;
};

describe('web data crawl', { timeout: 90_000 }, () => {
  let t: TestApp;
  let site: Site;
  let a: V1Tenant;

  beforeAll(async () => {
    site = await startSite({ articles: 8 });
    t = await webdataTestApp();
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  const start = async (body: Record<string, unknown>, on = site) => {
    const res = await t.v1('POST', '/webdata/crawl', a.live, { url: `${on.url}/`, ...body });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('pending');
    return res.json().id as string;
  };
  const finished = async (id: string) =>
    (await settled(t, a.live, `/webdata/crawl/${id}?includePages=true`)) as {
      status: string;
      pages: Page[];
      [k: string]: unknown;
    };

  it('crawls breadth-first to maxDepth, skips robots-disallowed paths, 404s and canonical duplicates', async () => {
    site.reset();
    const c = await finished(await start({ maxDepth: 1, maxPages: 100 }));
    expect(c.status, String(c.error)).toBe('completed');
    expect(c.pages[0]).toMatchObject({ url: `${site.url}/`, depth: 0, title: 'Home' });
    expect(c.pages.every((p) => p.depth <= 1)).toBe(true);
    const titles = c.pages.map((p) => p.title).sort();
    expect(titles).toEqual(['About', 'Article 1', 'Docs', 'Home', 'Oak Chair']);
    expect(site.hits.get('/private/secret')).toBeUndefined();
    expect(site.hits.get('/robots.txt')).toBe(1);
    expect(site.hits.get('/articles/2')).toBeUndefined();
    expect(c.pagesCrawled).toBe(5);
    expect(c.pagesFailed).toBe(1); // /missing
    expect(c.pages).toHaveLength(5);
    expect(c.failedPages).toEqual([
      {
        url: `${site.url}/missing`,
        statusCode: 404,
        error: 'HTTP status: the page answered 404.',
        code: 'REMOTE_HTTP_ERROR',
      },
    ]);
    expect(c.pages.find((p) => p.title === 'Docs')!.markdown).toContain('| Name | Type | Default |');
    expect(site.maxInFlight()).toBeLessThanOrEqual(4);
  });

  it('stores exactly maxPages pages, and only the start page at maxDepth 0', async () => {
    const three = await finished(await start({ maxDepth: 5, maxPages: 3 }));
    expect(three.pages).toHaveLength(3);
    expect(three.pages[0]!.depth).toBe(0);
    const one = await finished(await start({ maxDepth: 0, maxPages: 50 }));
    expect(one.pages.map((p) => p.url)).toEqual([`${site.url}/`]);
    const deep = await finished(await start({ maxDepth: 10, maxPages: 1000 }));
    const articles = deep.pages.filter((p) => p.title?.startsWith('Article'));
    expect(articles).toHaveLength(8);
    expect(Math.max(...deep.pages.map((p) => p.depth))).toBe(8);
  });

  it('with respectRobotsTxt false fetches disallowed paths', async () => {
    site.reset();
    const c = await finished(await start({ maxDepth: 1, maxPages: 100, respectRobotsTxt: false }));
    expect(c.pages.map((p) => p.title)).toContain('Secret');
    expect(site.hits.get('/robots.txt')).toBeUndefined();
  });

  it('honours Crawl-delay by sending one request at a time', async () => {
    const slowSite = await startSite({ articles: 3, crawlDelay: 0.05 });
    try {
      const c = await finished(await start({ maxDepth: 1, maxPages: 100 }, slowSite));
      expect(c.pages.length).toBeGreaterThanOrEqual(4);
      expect(slowSite.maxInFlight()).toBe(1);
    } finally {
      await slowSite.close();
    }
  });

  it('returns the formats asked for, and pages with their own cursor', async () => {
    const id = await start({ maxDepth: 1, maxPages: 4, formats: ['links', 'html', 'rawHtml', 'images'] });
    const c = await finished(id);
    expect(c.pages).toHaveLength(4);
    expect(c.pages[0]!.markdown).toBeNull();
    // html is what the markdown is made from (the main content), rawHtml the page as fetched.
    expect(c.pages[0]!.html).toContain('A garden site.');
    expect(c.pages[0]!.html).not.toContain('<nav>');
    expect(c.pages[0]!.rawHtml).toContain('<nav><a href="/">Home</a>');
    expect(c.pages[0]!.rawHtml).toContain('<h1>Welcome</h1>');
    expect(c.pages[0]!.images).toEqual([`${site.url}/img/garden.png`]);
    expect(c.pages[0]!.links).toContain(`${site.url}/docs`);
    expect(c.pages[0]!.screenshot).toBeUndefined();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.v1(
        'GET',
        `/webdata/crawl/${id}/pages?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        a.live,
      );
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json();
      seen.push(...page.items.map((p: Page) => p.url));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(c.pages.map((p) => p.url));
  });

  it("takes formats in scrapeOptions as Firecrawl's crawl does; a screenshot needs the browser", async () => {
    const c = await finished(await start({ maxDepth: 0, scrapeOptions: { formats: ['rawHtml'] } }));
    expect(c.status, String(c.error)).toBe('completed');
    expect(c.formats).toEqual(['rawHtml']);
    expect(c.scrapeOptions).toBeUndefined();
    expect(c.pages[0]).toMatchObject({
      markdown: null,
      rawHtml: expect.stringContaining('<title>Home</title>'),
    });
    // No renderer is plugged in here: the start page cannot be shot, so the crawl fails with the reason
    // (the Chromium case is test/e2e/browser/webdata-actions.test.ts).
    const shot = await finished(await start({ maxDepth: 0, formats: ['markdown', 'screenshot'] }));
    expect(shot.status).toBe('failed');
    expect(shot.error).toMatch(/^Needs a browser \(a screenshot was asked for\)/);
  });

  it('cancels a running crawl: it ends cancelled and stops fetching', async () => {
    const slow = await startSite({ articles: 12, latencyMs: 150 });
    try {
      const id = await start({ maxDepth: 10, maxPages: 500 }, slow);
      const cancel = await t.v1('POST', `/webdata/crawl/${id}/cancel`, a.live);
      expect(cancel.json()).toEqual({ success: true });
      const again = await t.v1('POST', `/webdata/crawl/${id}/cancel`, a.live);
      expect(again.statusCode).toBe(409);
      expect(again.json().error.code).toBe('CRAWL_NOT_CANCELLABLE');
      await new Promise((r) => setTimeout(r, 1000));
      const c = (await t.v1('GET', `/webdata/crawl/${id}?includePages=true`, a.live)).json();
      expect(c.status).toBe('cancelled');
      expect(c.pages.length).toBeLessThan(10);
      expect(slow.hits.get('/articles/10')).toBeUndefined();
    } finally {
      await slow.close();
    }
  });

  it('fails with the reason when the start page cannot be fetched', async () => {
    const res = await t.v1('POST', '/webdata/crawl', a.live, { url: `${site.url}/missing` });
    const c = await finished(res.json().id);
    expect(c.status).toBe('failed');
    expect(c.error).toBe('HTTP status: the page answered 404.');
  });

  it('rejects bad input and hides other tenants’ crawls', async () => {
    for (const body of [
      {},
      { url: site.url, maxDepth: -1 },
      { url: site.url, maxPages: 0 },
      { url: site.url, maxPages: 10_001 },
      { url: site.url, formats: ['pdf'] },
      { url: site.url, stealth: 'yes' },
    ]) {
      expect((await t.v1('POST', '/webdata/crawl', a.live, body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    const id = await start({ maxDepth: 0 });
    await finished(id);
    await expectJobRoutesSecured(t, a, 'CRAWL_NOT_FOUND', [
      ['GET', `/webdata/crawl/${id}`],
      ['GET', `/webdata/crawl/${id}/pages`],
      ['POST', `/webdata/crawl/${id}/cancel`],
    ]);
    expect((await t.v1('GET', `/webdata/crawl/${id}/pages?cursor=nope`, a.live)).statusCode).toBe(400);
  });
});
