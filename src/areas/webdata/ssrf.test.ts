import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { settled } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';

// The SSRF guard on every web data path. With OUTBOUND_ALLOW empty, loopback, the private ranges, link-local
// metadata, [::1], IPv4-mapped IPv6 and a name resolving to loopback are all refused by extraction, crawl,
// map and documents. With only 127.0.0.1 opened, a redirect from it into other private space is refused.
// (A DNS answer that changes between lookups cannot reach an unchecked address because the guard pins the
// checked one: src/core/net/safe-fetch.test.ts proves that with a resolver that flips.)

describe('web data SSRF guard', { timeout: 90_000 }, () => {
  let closed: TestApp;
  let open: TestApp;
  let site: Site;
  let a: V1Tenant;
  let b: V1Tenant;

  beforeAll(async () => {
    site = await startSite();
    const env = {
      V1_RATE_LIMIT_BURST: '1000000',
      V1_RATE_LIMIT_PER_SEC: '100000',
      WEBDATA_FETCH_TIMEOUT_MS: '3000',
    };
    closed = await testApp({ background: true, env });
    open = await testApp({ background: true, env: { ...env, OUTBOUND_ALLOW: '127.0.0.1/32' } });
    a = await seedV1Tenant(closed.deps);
    b = await seedV1Tenant(open.deps);
  }, 180_000);
  afterAll(async () => {
    await closed?.close();
    await open?.close();
    await site?.close();
  });

  const targets = () => [
    `${site.url}/`,
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    `http://[::1]:${site.port}/`,
    `http://[::ffff:127.0.0.1]:${site.port}/`,
    `http://[::ffff:7f00:1]:${site.port}/`,
    `http://localhost:${site.port}/`,
    `http://2130706433:${site.port}/`,
  ];

  const settle = (t: TestApp, key: string, path: string) => settled(t, key, path, 600);

  it('extraction and crawl fail with "Blocked address" for every private target', async () => {
    for (const url of targets()) {
      const x = await closed.v1('POST', '/webdata/extractions', a.live, { url, mode: 'markdown' });
      const done = await settle(closed, a.live, `/webdata/extractions/${x.json().id}`);
      expect(done.status, url).toBe('failed');
      expect(done.error, url).toMatch(/^Blocked address/);
      const c = await closed.v1('POST', '/webdata/crawl', a.live, { url, maxDepth: 1 });
      const crawl = await settle(closed, a.live, `/webdata/crawl/${c.json().id}`);
      expect(crawl.status, url).toBe('failed');
      expect(crawl.error, url).toMatch(/^Blocked address/);
    }
    expect(site.hits.get('/')).toBeUndefined();
  });

  it('map and documents answer 400 URL_NOT_ALLOWED for every private target', async () => {
    for (const url of targets()) {
      for (const path of ['/webdata/map', '/webdata/documents']) {
        const res = await closed.v1('POST', path, a.live, { url });
        expect(res.statusCode, `${path} ${url}`).toBe(400);
        expect(res.json().error.code).toBe('URL_NOT_ALLOWED');
      }
    }
    expect(site.hits.size).toBe(0);
  });

  it('with 127.0.0.1 opened, a redirect from it into other private space is still refused', async () => {
    for (const to of [
      `http://127.0.0.2:${site.port}/`,
      'http://169.254.169.254/',
      'http://10.0.0.1/',
      `http://[::1]:${site.port}/`,
    ]) {
      const url = `${site.url}/redirect?to=${encodeURIComponent(to)}`;
      const x = await open.v1('POST', '/webdata/extractions', b.live, { url, mode: 'raw' });
      const done = await settle(open, b.live, `/webdata/extractions/${x.json().id}`);
      expect(done.status, to).toBe('failed');
      expect(done.error, to).toMatch(/^Blocked address/);
      const c = await open.v1('POST', '/webdata/crawl', b.live, { url, maxDepth: 0 });
      expect((await settle(open, b.live, `/webdata/crawl/${c.json().id}`)).error, to).toMatch(
        /^Blocked address/,
      );
      const doc = await open.v1('POST', '/webdata/documents', b.live, { url });
      expect(doc.json().error.code, to).toBe('URL_NOT_ALLOWED');
    }
    // The allowed address itself works, so the refusals above are the guard's and not a broken site.
    const ok = await open.v1('POST', '/webdata/extractions', b.live, {
      url: `${site.url}/about`,
      mode: 'markdown',
    });
    expect((await settle(open, b.live, `/webdata/extractions/${ok.json().id}`)).status).toBe('completed');
  });
});
