import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixtures, fixtures } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { loadConfig } from '../../config.ts';

// A page on another origin uploads to the disk driver's presigned URL and reads the delivered asset, as a
// browser does: raw fetch with Origin, preflight first, over a real socket.

const APP = 'https://shop.apps.example';

describe.each([
  ['any origin (default)', undefined],
  ['a configured list', APP],
] as const)('CORS on /blobs and /cdn with %s', (_name, origins) => {
  let t: TestApp;
  let fx: Fixtures;
  let a: V1Tenant;
  const local = (url: string) => t.url + url.slice(t.deps.config.publicUrl.length);
  const expected = origins ? APP : '*';

  beforeAll(async () => {
    t = await testApp({
      listen: true,
      env: origins ? { BLOB_CORS_ORIGINS: `${origins}, https://other.example` } : {},
    });
    fx = await fixtures();
    a = await seedV1Tenant(t.deps);
  });
  afterAll(() => t.close());

  it('answers the preflight, accepts the PUT and serves the asset with Access-Control-* headers', async () => {
    const up = (
      await t.v1('POST', '/cdn/upload', a.live, {
        filename: 'p.png',
        mimeType: 'image/png',
        size: fx.png.length,
      })
    ).json();
    const pre = await fetch(local(up.uploadUrl), {
      method: 'OPTIONS',
      headers: {
        origin: APP,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(expected);
    expect(pre.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type');
    if (origins) expect(pre.headers.get('vary')).toContain('Origin');

    const put = await fetch(local(up.uploadUrl), {
      method: 'PUT',
      headers: { ...up.uploadHeaders, origin: APP },
      body: new Uint8Array(fx.png),
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('access-control-allow-origin')).toBe(expected);
    // A used URL's refusal is readable by the page too.
    const again = await fetch(local(up.uploadUrl), {
      method: 'PUT',
      headers: { ...up.uploadHeaders, origin: APP },
      body: new Uint8Array(fx.png),
    });
    expect(again.status).toBe(409);
    expect(again.headers.get('access-control-allow-origin')).toBe(expected);
    expect((await again.json()).error.code).toBe('UPLOAD_URL_USED');

    const asset = (await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {})).json();
    const got = await fetch(local(asset.cdnUrl), { headers: { origin: APP } });
    expect(got.status).toBe(200);
    expect(got.headers.get('access-control-allow-origin')).toBe(expected);
    expect(got.headers.get('access-control-expose-headers')).toContain('ETag');
    expect(Buffer.from(await got.arrayBuffer()).equals(fx.png)).toBe(true);
    const cdnPre = await fetch(local(asset.cdnUrl), {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'GET' },
    });
    expect(cdnPre.status).toBe(204);
    expect(cdnPre.headers.get('access-control-allow-origin')).toBe(expected);

    // Vary names every request header the answer depends on: Accept for format=auto, Origin for a list.
    const { url } = (
      await t.v1('POST', '/cdn/transform', a.live, {
        assetId: up.assetId,
        options: { width: 10, format: 'auto' },
      })
    ).json();
    const img = await fetch(local(url), { headers: { origin: APP, accept: 'image/webp' } });
    expect(img.status).toBe(200);
    expect(img.headers.get('access-control-allow-origin')).toBe(expected);
    expect(img.headers.get('vary')).toBe(origins ? 'Origin, Accept' : 'Accept');
    await img.arrayBuffer();
  });

  it.runIf(origins)('gives an origin not on the list no Access-Control-Allow-Origin', async () => {
    const pre = await fetch(`${t.url}/blobs/cdn-upload/x/y.png?exp=1&sig=x`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'PUT' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(pre.headers.get('access-control-allow-methods')).toBeNull();
    expect(pre.headers.get('vary')).toContain('Origin');
  });
});

describe('BLOB_CORS_ORIGINS', () => {
  it('is parsed once: `*` wins, a list is kept, a non-origin is refused at start-up', () => {
    const base = { DATA_DIR: '/tmp/pier-cors-config-test' };
    expect(loadConfig({ ...base, BLOB_CORS_ORIGINS: '*' }).blobCorsOrigins).toBe('*');
    expect(
      loadConfig({ ...base, BLOB_CORS_ORIGINS: 'https://a.example/, http://b.test:8080' }).blobCorsOrigins,
    ).toEqual(['https://a.example', 'http://b.test:8080']);
    expect(() => loadConfig({ ...base, BLOB_CORS_ORIGINS: 'not an origin' })).toThrow(/BLOB_CORS_ORIGINS/);
  });
});
