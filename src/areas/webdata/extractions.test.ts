import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { expectJobRoutesSecured, settled, webdataTestApp } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';
import type { ManualClock } from '../../core/clock.ts';
import { plugInto } from './plugins.ts';

// Extractions through the API with the job worker running, against the local test site (opened to Pier by
// OUTBOUND_ALLOW, as an operator would): every mode, metadata, links and images, the failures a person
// reads in `error`, the browser path through an injected renderer, the list's cursor, delete, bad input
// and tenant isolation.

describe('web data extractions', { timeout: 60_000 }, () => {
  let t: TestApp;
  let site: Site;
  let a: V1Tenant;

  beforeAll(async () => {
    site = await startSite();
    t = await webdataTestApp({ WEBDATA_FETCH_TIMEOUT_MS: '1500' });
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  const extract = async (body: Record<string, unknown>, key = a.live) => {
    const res = await t.v1('POST', '/webdata/extractions', key, body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('pending');
    return settled(t, key, `/webdata/extractions/${res.json().id}`, 600);
  };

  it('markdown mode keeps headings, lists, code and links, drops navigation, and reads the metadata', async () => {
    const x = await extract({ url: `${site.url}/articles/1`, mode: 'markdown' });
    expect(x.status, x.error).toBe('completed');
    expect(x.markdown).toContain('# Article 1 heading');
    expect(x.markdown).toContain('## Checklist 1');
    expect(x.markdown).toMatch(/^- Spade$/m);
    expect(x.markdown).toContain('```\nplant --row 1 --depth 2cm\n```');
    expect(x.markdown).toContain(`[article 2](${site.url}/articles/2)`);
    expect(x.markdown).not.toContain('Members');
    expect(x.markdown).not.toContain('© Example site');
    expect(x.pageMetadata).toEqual({
      title: 'Article 1',
      description: 'About Article 1',
      ogImage: `${site.url}/img/article-1.png`,
    });
    expect(x.extractedData).toEqual({});
    expect(x.tokensUsed).toBe(0);
    expect(x.processingTimeMs).toBeGreaterThanOrEqual(0);
    expect(x.fetchedWith).toBe('fetch');
    expect(x.completedAt).not.toBeNull();
    expect(x.links).toBeUndefined();
  });

  it('keeps tables as GFM and returns links and images when asked', async () => {
    const x = await extract({
      url: `${site.url}/docs`,
      mode: 'markdown',
      includeLinks: true,
      includeImages: true,
    });
    expect(x.markdown).toContain('| Name | Type | Default |');
    expect(x.markdown).toContain('| crop | string | beans |');
    expect(x.links).toContain(`${site.url}/files/guide.pdf`);
    expect(x.images).toEqual([`${site.url}/img/diagram.png`]);
  });

  it('raw mode returns the whole HTML; includeMetadata false leaves the metadata out', async () => {
    const x = await extract({ url: `${site.url}/docs`, mode: 'raw', includeMetadata: false });
    expect(x.status).toBe('completed');
    expect(x.extractedData.html).toContain('<nav><a href="/">Home</a>');
    expect(x.markdown).toBeNull();
    expect(x.pageMetadata).toBeNull();
  });

  it('schema mode without a model answers with the heuristic extractor', async () => {
    const x = await extract({
      url: `${site.url}/products/oak-chair`,
      mode: 'schema',
      schema: {
        type: 'object',
        properties: { name: { type: 'string' }, price: { type: 'number' }, currency: { type: 'string' } },
      },
    });
    expect(x.status, x.error).toBe('completed');
    expect(x.extractedBy).toBe('heuristic');
    expect(x.extractedData).toEqual({ name: 'Oak Chair', price: 149, currency: 'EUR' });
  });

  it('auto mode returns markdown and the generic fields', async () => {
    const x = await extract({ url: `${site.url}/products/oak-chair` });
    expect(x.mode).toBe('auto');
    expect(x.extractedBy).toBe('heuristic');
    expect(x.extractedData.title).toBe('Oak Chair');
    expect(x.markdown).toContain('A sturdy chair made of solid oak.');
  });

  it.each([
    ['/missing', /HTTP status: the page answered 404/],
    ['/garbage', /Not HTML/],
    ['/files/guide.pdf', /Not HTML: the page is application\/pdf/],
    ['/loop', /Too many redirects/],
    ['/slow', /Timeout/],
    ['/app', /Needs a browser \(the page needs JavaScript/],
  ])('%s fails with a reason a person understands', async (path, reason) => {
    const x = await extract({ url: `${site.url}${path}`, mode: 'markdown' });
    expect(x.status).toBe('failed');
    expect(x.error).toMatch(reason);
    expect(x.completedAt).not.toBeNull();
  });

  it('a host that does not resolve is a DNS failure', async () => {
    const x = await extract({ url: 'http://no-such-host.invalid/', mode: 'markdown' });
    expect(x.status).toBe('failed');
    expect(x.error).toMatch(/^DNS failure/);
  });

  it('uses the injected renderer for JavaScript pages and for waits', async () => {
    const calls: { url: string; wait?: string }[] = [];
    plugInto(t.deps, {
      renderer: {
        render: async (url, o) => {
          calls.push({ url, wait: o.waitForSelector });
          return {
            html: '<html><body><h1>Rendered by script</h1></body></html>',
            finalUrl: url,
            status: 200,
          };
        },
      },
    });
    try {
      const js = await extract({ url: `${site.url}/app`, mode: 'markdown' });
      expect(js.status, js.error).toBe('completed');
      expect(js.fetchedWith).toBe('browser');
      expect(js.markdown).toContain('Rendered by script');
      const waited = await extract({ url: `${site.url}/docs`, mode: 'raw', waitForSelector: '#late' });
      expect(waited.fetchedWith).toBe('browser');
      expect(calls).toEqual([{ url: `${site.url}/app` }, { url: `${site.url}/docs`, wait: '#late' }]);
    } finally {
      plugInto(t.deps, { renderer: undefined });
    }
  });

  it('lists newest first with a cursor and filters; delete removes', async () => {
    const b = await seedV1Tenant(t.deps);
    const ids = [];
    for (const p of ['/about', '/docs', '/missing']) {
      (t.clock as ManualClock).advance(1000);
      ids.push((await extract({ url: `${site.url}${p}`, mode: 'markdown' }, b.live)).id);
    }
    const first = (await t.v1('GET', '/webdata/extractions?limit=2', b.live)).json();
    expect(first.items.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (
      await t.v1('GET', `/webdata/extractions?limit=2&cursor=${first.nextCursor}`, b.live)
    ).json();
    expect(second.items.map((x: { id: string }) => x.id)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeNull();
    const failed = (await t.v1('GET', '/webdata/extractions?status=failed', b.live)).json();
    expect(failed.items.map((x: { id: string }) => x.id)).toEqual([ids[2]]);
    const byUrl = (
      await t.v1('GET', `/webdata/extractions?url=${encodeURIComponent(`${site.url}/about`)}`, b.live)
    ).json();
    expect(byUrl.items).toHaveLength(1);
    const del = await t.v1('DELETE', `/webdata/extractions/${ids[0]}`, b.live);
    expect(del.json()).toEqual({ success: true });
    expect((await t.v1('GET', `/webdata/extractions/${ids[0]}`, b.live)).statusCode).toBe(404);
    expect((await t.v1('DELETE', `/webdata/extractions/${ids[0]}`, b.live)).statusCode).toBe(404);
  });

  it('rejects bad input with a 4xx envelope', async () => {
    const bad = [
      {},
      { url: 'ftp://example.com/x' },
      { url: 'not a url' },
      { url: `${site.url}/`, mode: 'schema' },
      { url: `${site.url}/`, mode: 'pdf' },
      { url: `${site.url}/`, schema: { type: 'no-such-type' } },
      { url: `${site.url}/`, waitForTimeout: 10_000_000 },
      { url: `${site.url}/`, includeLinks: 'yes' },
    ];
    for (const body of bad) {
      const res = await t.v1('POST', '/webdata/extractions', a.live, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
    const cursor = await t.v1('GET', '/webdata/extractions?cursor=forged.sig', a.live);
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json().error.code).toBe('INVALID_CURSOR');
    expect((await t.v1('GET', '/webdata/extractions?limit=1000', a.live)).statusCode).toBe(400);
    expect((await t.v1('GET', '/webdata/extractions/not-a-uuid', a.live)).statusCode).toBe(404);
  });

  it('another organization, or the sandbox key, sees a 404', async () => {
    const x = await extract({ url: `${site.url}/about`, mode: 'markdown' });
    await expectJobRoutesSecured(t, a, 'EXTRACTION_NOT_FOUND', [
      ['GET', `/webdata/extractions/${x.id}`],
      ['DELETE', `/webdata/extractions/${x.id}`],
    ]);
    const other = await seedV1Tenant(t.deps);
    const list = (await t.v1('GET', '/webdata/extractions', other.live)).json();
    expect(list.items).toEqual([]);
    expect((await t.v1('GET', `/webdata/extractions/${x.id}`, a.live)).statusCode).toBe(200);
  });
});
