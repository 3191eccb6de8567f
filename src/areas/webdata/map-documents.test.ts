import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { expectV1Security, type V1Tenant } from '../../../test/v1-security.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';

// Map and documents, answered in the request, against the local test site: robots.txt's Sitemap line to a
// sitemap index with a gzip child, the link-crawl fallback when a site has no sitemap, search and limit;
// a PDF and a DOCX to markdown with pageCount, and clear 4xx answers for anything else.

describe('web data map and documents', { timeout: 60_000 }, () => {
  let t: TestApp;
  let site: Site;
  let bare: Site;
  let a: V1Tenant;

  beforeAll(async () => {
    site = await startSite({ articles: 5 });
    bare = await startSite({ articles: 3, sitemap: false });
    t = await testApp({
      env: {
        OUTBOUND_ALLOW: '127.0.0.1/32',
        WEBDATA_FETCH_TIMEOUT_MS: '1500',
        V1_RATE_LIMIT_BURST: '100000',
      },
    });
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
    await bare?.close();
  });

  it('maps a site from robots.txt → sitemap index → plain and gzip sitemaps', async () => {
    const res = await t.v1('POST', '/webdata/map', a.live, { url: site.url });
    expect(res.statusCode, res.body).toBe(200);
    const m = res.json();
    expect(m.status).toBe('completed');
    expect(m.source).toBe('sitemap');
    expect(m.urls).toEqual([
      `${site.url}/`,
      `${site.url}/docs`,
      `${site.url}/products/oak-chair`,
      ...[1, 2, 3, 4, 5].map((n) => `${site.url}/articles/${n}`),
    ]);
    expect(site.hits.get('/sitemap-articles.xml.gz')).toBe(1);
  });

  it('filters with search and caps with limit', async () => {
    const m = (
      await t.v1('POST', '/webdata/map', a.live, { url: site.url, search: 'ARTICLES', limit: 2 })
    ).json();
    expect(m.urls).toEqual([`${site.url}/articles/1`, `${site.url}/articles/2`]);
  });

  it('falls back to a link crawl without a sitemap, staying on the site and off mailto links', async () => {
    const m = (await t.v1('POST', '/webdata/map', a.live, { url: `${bare.url}/` })).json();
    expect(m.source).toBe('links');
    expect(m.urls).toContain(`${bare.url}/`);
    expect(m.urls).toContain(`${bare.url}/articles/3`);
    expect(m.urls).toContain(`${bare.url}/docs`);
    expect(m.urls.every((u: string) => u.startsWith(bare.url))).toBe(true);
    expect(bare.hits.get('/sitemap.xml')).toBe(1);
  });

  it('parses a PDF into markdown with its page count', async () => {
    const res = await t.v1('POST', '/webdata/documents', a.live, { url: `${site.url}/files/guide.pdf` });
    expect(res.statusCode, res.body).toBe(200);
    const d = res.json();
    expect(d).toMatchObject({ status: 'completed', type: 'pdf', pageCount: 2 });
    expect(d.markdown).toContain('Hello from page one');
    expect(d.markdown).toContain('And page two');
  });

  it('parses a DOCX (served as octet-stream) keeping its heading, bold text and code', async () => {
    const d = (
      await t.v1('POST', '/webdata/documents', a.live, { url: `${site.url}/files/notes.docx` })
    ).json();
    expect(d).toMatchObject({ status: 'completed', type: 'docx', pageCount: 3 });
    expect(d.markdown).toContain('# Meeting notes');
    expect(d.markdown).toContain('**Owner:** Alice');
    // pandoc's code styles: a fenced block with its lines, inline code in backticks.
    expect(d.markdown).toContain('```\ndef water(bed):\n    return bed * 2\n```');
    expect(d.markdown).toContain('Water with `water(beans)`');
  });

  it('answers a clear 4xx for files that are neither, and for unreachable or missing documents', async () => {
    const html = await t.v1('POST', '/webdata/documents', a.live, { url: `${site.url}/docs` });
    expect(html.statusCode).toBe(422);
    expect(html.json().error.code).toBe('DOCUMENT_UNSUPPORTED');
    const garbage = await t.v1('POST', '/webdata/documents', a.live, { url: `${site.url}/garbage` });
    expect(garbage.statusCode).toBe(422);
    const missing = await t.v1('POST', '/webdata/documents', a.live, { url: `${site.url}/missing.pdf` });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error).toEqual({
      code: 'REMOTE_HTTP_ERROR',
      message: 'HTTP status: the document answered 404.',
    });
    const blocked = await t.v1('POST', '/webdata/documents', a.live, { url: 'http://10.0.0.1/x.pdf' });
    expect(blocked.statusCode).toBe(400);
    expect(blocked.json().error.code).toBe('URL_NOT_ALLOWED');
    const slow = await t.v1('POST', '/webdata/documents', a.live, { url: `${site.url}/slow` });
    expect(slow.statusCode).toBe(422);
    expect(slow.json().error.code).toBe('REMOTE_TIMEOUT');
  });

  it('rejects bad bodies and needs a key', async () => {
    for (const body of [
      {},
      { url: 'file:///etc/passwd' },
      { url: site.url, limit: 0 },
      { url: site.url, search: 5 },
    ]) {
      const res = await t.v1('POST', '/webdata/map', a.live, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await t.v1('POST', '/webdata/documents', a.live, { url: 'gopher://x' })).statusCode).toBe(400);
    await expectV1Security(t, { method: 'POST', url: '/webdata/map', body: { url: site.url }, owner: a });
    await expectV1Security(t, {
      method: 'POST',
      url: '/webdata/documents',
      body: { url: site.url },
      owner: a,
    });
  });
});
