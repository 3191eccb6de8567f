import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { settled, webdataTestApp } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';
import { crawlScope } from './options/crawl-scope.ts';
import { type CrawlOptions, webdataCrawlPages } from './tables.ts';

// Crawl options through the API with the job worker, against the local test site (its robots.txt names a
// sitemap index with a plain and a gzip child): includePaths/excludePaths as path regexes, sitemap seeding
// (include, only, skip), each page's content chosen by scrapeOptions, and 400s for a bad or exponential regex. Subdomains are checked on the scope
// itself: the test site is one IP address, with no names under it.

type Page = { url: string; depth: number; title: string | null; markdown: string | null };

const base: CrawlOptions = {
  maxDepth: 2,
  maxPages: 50,
  formats: ['markdown'],
  respectRobotsTxt: true,
  stealth: false,
};

describe('crawl scope', () => {
  it('follows subdomains only when allowed, never other sites', () => {
    const own = crawlScope('https://example.com/', base);
    expect(own.follows('https://www.example.com/a')).toBe(true);
    expect(own.follows('https://docs.example.com/a')).toBe(false);
    const subs = crawlScope('https://www.example.com/', { ...base, allowSubdomains: true });
    expect(subs.follows('https://docs.example.com/a')).toBe(true);
    expect(subs.follows('https://a.b.example.com/a')).toBe(true);
    expect(subs.follows('https://notexample.com/a')).toBe(false);
    expect(subs.follows('https://example.com.evil.test/a')).toBe(false);
  });

  it('matches include and exclude regexes on the path only, and skips assets', () => {
    const s = crawlScope('https://example.com/', {
      ...base,
      includePaths: ['^/blog/', '^/docs/v2/'],
      excludePaths: ['/drafts?/', '\\.html$'],
    });
    expect(s.follows('https://example.com/blog/post-1')).toBe(true);
    expect(s.follows('https://example.com/docs/v2/intro?tab=blog/')).toBe(true);
    expect(s.follows('https://example.com/about?next=/blog/')).toBe(false);
    expect(s.follows('https://example.com/blog/drafts/x')).toBe(false);
    expect(s.follows('https://example.com/blog/old.html')).toBe(false);
    expect(s.follows('https://example.com/blog/cover.png')).toBe(false);
  });
});

describe('web data crawl options', { timeout: 90_000 }, () => {
  let t: TestApp;
  let site: Site;
  let a: V1Tenant;
  let b: V1Tenant;

  beforeAll(async () => {
    site = await startSite({ articles: 8 });
    t = await webdataTestApp();
    a = await seedV1Tenant(t.deps);
    b = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  const crawl = async (body: Record<string, unknown>) => {
    const res = await t.v1('POST', '/webdata/crawl', a.live, { url: `${site.url}/`, ...body });
    expect(res.statusCode, res.body).toBe(200);
    const c = await settled(t, a.live, `/webdata/crawl/${res.json().id}?includePages=true`);
    expect(c.status, String(c.error)).toBe('completed');
    return c as { pages: Page[]; [k: string]: unknown };
  };
  const paths = (pages: Page[]) => pages.map((p) => new URL(p.url).pathname).sort();

  it('seeds from the sitemap and keeps only included, not excluded paths', async () => {
    site.reset();
    const c = await crawl({
      maxDepth: 1,
      maxPages: 100,
      sitemap: 'include',
      includePaths: ['^/articles/'],
      excludePaths: ['^/articles/3$'],
    });
    expect(paths(c.pages)).toEqual([
      '/',
      '/articles/1',
      '/articles/2',
      '/articles/4',
      '/articles/5',
      '/articles/6',
      '/articles/7',
      '/articles/8',
    ]);
    // From the gzip sitemap, one hop from the start; the excluded and the not-included are never fetched.
    expect(c.pages.find((p) => p.url.endsWith('/articles/7'))!.depth).toBe(1);
    expect(site.hits.get('/sitemap-articles.xml.gz')).toBe(1);
    expect(site.hits.get('/articles/3')).toBeUndefined();
    expect(site.hits.get('/docs')).toBeUndefined();
    expect(site.hits.get('/about')).toBeUndefined();
    expect(c).toMatchObject({ sitemap: 'include', includePaths: ['^/articles/'] });
  });

  it('without the sitemap the same filters reach only what links lead to', async () => {
    const c = await crawl({ maxDepth: 1, maxPages: 100, includePaths: ['^/articles/'] });
    expect(paths(c.pages)).toEqual(['/', '/articles/1']);
    expect(c.sitemap).toBe('skip');
  });

  it("sitemap only: the start page and the sitemap's URLs, no links followed", async () => {
    site.reset();
    const c = await crawl({ maxDepth: 5, maxPages: 100, sitemap: 'only' });
    expect(paths(c.pages)).toEqual([
      '/',
      '/articles/1',
      '/articles/2',
      '/articles/3',
      '/articles/4',
      '/articles/5',
      '/articles/6',
      '/articles/7',
      '/articles/8',
      '/docs',
      '/products/oak-chair',
    ]);
    expect(site.hits.get('/about')).toBeUndefined();
    expect(site.hits.get('/copy-of-first')).toBeUndefined();
  });

  it("scrapeOptions choose each page's content; links are still followed from the whole page", async () => {
    const headings = await crawl({
      maxDepth: 1,
      maxPages: 100,
      includePaths: ['^/(docs|about)$'],
      scrapeOptions: { includeTags: ['h1'] },
    });
    expect(headings.pages.map((p) => p.markdown).sort()).toEqual(['# About', '# Documentation', '# Welcome']);
    const whole = await crawl({
      maxDepth: 0,
      scrapeOptions: { onlyMainContent: false, excludeTags: ['footer'] },
    });
    expect(whole.pages[0]!.markdown).toContain(`[Members](${site.url}/private/secret)`);
    expect(whole.pages[0]!.markdown).not.toContain('© Example site');
    expect(whole.scrapeOptions).toEqual({ onlyMainContent: false, excludeTags: ['footer'] });
  });

  it('maxAge takes pages the organization stored recently instead of fetching them, and only those', async () => {
    const body = { maxDepth: 1, maxPages: 100, excludePaths: ['^/articles/', '^/missing$'] };
    const first = await crawl(body);
    expect(paths(first.pages)).toEqual(['/', '/about', '/copy-of-first', '/docs', '/products/oak-chair']);

    site.reset();
    const again = await crawl({ ...body, maxAge: 600_000 });
    expect(paths(again.pages)).toEqual(paths(first.pages));
    const md = (c: { pages: Page[] }) => c.pages.map((p) => p.markdown).sort();
    expect(md(again)).toEqual(md(first));
    expect([...site.hits.keys()]).toEqual(['/robots.txt']);
    expect(again.maxAge).toBe(600_000);

    // Content chosen differently, or another organization: fetched.
    site.reset();
    await crawl({ ...body, maxAge: 600_000, scrapeOptions: { onlyMainContent: false } });
    expect(site.hits.get('/docs')).toBe(1);
    const other = await t.v1('POST', '/webdata/crawl', b.live, {
      url: `${site.url}/`,
      ...body,
      maxAge: 600_000,
    });
    expect((await settled(t, b.live, `/webdata/crawl/${other.json().id}`)).status).toBe('completed');
    expect(site.hits.get('/docs')).toBe(2);
  });

  it('includePages answers the first 1,000 pages and a cursor to the rest, not a whole large crawl', async () => {
    const res = await t.v1('POST', '/webdata/crawl', a.live, { url: `${site.url}/`, maxDepth: 0 });
    const id = res.json().id as string;
    expect((await settled(t, a.live, `/webdata/crawl/${id}`)).status).toBe('completed');
    // A large crawl's stored pages, written as the crawl writes them (seq after the start page's 0).
    const rows = Array.from({ length: 1004 }, (_, i) => ({
      crawlId: id,
      seq: i + 1,
      url: `${site.url}/generated/${i + 1}`,
      depth: 1,
      statusCode: 200,
      title: `Generated ${i + 1}`,
      markdown: `Page ${i + 1}`,
      createdAt: t.deps.clock.now(),
    }));
    for (let i = 0; i < rows.length; i += 250)
      await t.deps.db.orm.insert(webdataCrawlPages).values(rows.slice(i, i + 250));

    const c = (await t.v1('GET', `/webdata/crawl/${id}?includePages=true`, a.live)).json();
    expect(c.pages).toHaveLength(1000);
    expect(c.pages[999].title).toBe('Generated 999');
    expect(c.pagesNextCursor).toEqual(expect.any(String));
    const rest = (
      await t.v1(
        'GET',
        `/webdata/crawl/${id}/pages?limit=100&cursor=${encodeURIComponent(c.pagesNextCursor)}`,
        a.live,
      )
    ).json();
    expect(rest.items.map((p: Page) => p.title)).toEqual([
      'Generated 1000',
      'Generated 1001',
      'Generated 1002',
      'Generated 1003',
      'Generated 1004',
    ]);
    expect(rest.nextCursor).toBeNull();
  });

  it('answers 400 for a regex that does not compile or can backtrack for ever, and a bad sitemap mode', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ includePaths: ['^/blog/('] }, /includePaths.*not a usable regex/],
      [{ excludePaths: ['(a+)+$'] }, /exponential/],
      [{ includePaths: [] }, /includePaths/],
      [{ sitemap: 'sometimes' }, /sitemap/],
      [{ allowSubdomains: 'yes' }, /allowSubdomains/],
      [{ scrapeOptions: { includeTags: ['h1['] } }, /not a valid CSS selector/],
      [{ scrapeOptions: { formats: ['pdf'] } }, /scrapeOptions/],
      [{ formats: ['markdown', 'json'] }, /formats/],
      [{ maxAge: 'soon' }, /maxAge/],
    ];
    for (const [extra, message] of bad) {
      const res = await t.v1('POST', '/webdata/crawl', a.live, { url: `${site.url}/`, ...extra });
      expect(res.statusCode, JSON.stringify(extra)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
      expect(res.json().error.message, JSON.stringify(extra)).toMatch(message);
    }
  });
});
