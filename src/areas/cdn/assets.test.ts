import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixtures, fixtures, getCdn, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { expectV1Security, type V1Tenant } from '../../../test/v1-security.ts';
import type { ManualClock } from '../../core/clock.ts';
import { storeAsset } from './index.ts';

// Assets: get, list (filters, sort, pages), patch, delete one and many, move; storage usage; SVG and
// attachment delivery; and the security cases of every operation (another org's asset is a 404).

describe('CDN assets', () => {
  let t: TestApp;
  let fx: Fixtures;
  let a: V1Tenant;

  beforeAll(async () => {
    t = await testApp();
    fx = await fixtures();
    a = await seedV1Tenant(t.deps);
  });
  afterAll(() => t.close());

  const up = async (key: string, filename: string, bytes: Buffer, mimeType: string, folder?: string) => {
    (t.clock as ManualClock).advance(1000); // distinct createdAt, so "newest first" is well defined
    const r = await uploadAsset(t, key, { filename, mimeType, bytes, folder });
    expect(r.confirm!.statusCode).toBe(200);
    return r.confirm!.json();
  };

  it('answers 401/403/404 on every operation for the wrong caller', async () => {
    const own = await up(a.live, 'own.png', fx.png, 'image/png');
    const id = own.assetId;
    const cases = [
      { method: 'GET' as const, url: `/cdn/assets/${id}` },
      { method: 'PATCH' as const, url: `/cdn/assets/${id}`, body: { metadata: { x: 1 } } },
      { method: 'DELETE' as const, url: `/cdn/assets/${id}` },
      { method: 'POST' as const, url: `/cdn/upload/${id}/confirm`, body: {} },
      { method: 'POST' as const, url: '/cdn/transform', body: { assetId: id, options: { width: 10 } } },
    ];
    for (const c of cases) await expectV1Security(t, { ...c, owner: a, notFoundCode: 'ASSET_NOT_FOUND' });
    // Bulk operations by another org touch nothing and report the id as not found.
    const other = await seedV1Tenant(t.deps);
    const del = await t.v1('POST', '/cdn/assets/delete', other.live, { assetIds: [id] });
    expect(del.json()).toEqual({ success: true, deleted: 0, notFound: [id] });
    const mv = await t.v1('POST', '/cdn/assets/move', other.live, { assetIds: [id], folder: 'stolen' });
    expect(mv.json()).toEqual({ success: true, moved: 0, notFound: [id] });
    const list = await t.v1('GET', '/cdn/assets', other.live);
    expect(list.json().total).toBe(0);
    const still = await t.v1('GET', `/cdn/assets/${id}`, a.live);
    expect(still.json().folder).toBe('');
    expect((await t.v1('GET', '/cdn/assets/not-a-uuid', a.live)).json().error.code).toBe('ASSET_NOT_FOUND');
  });

  it('lists with folder, type, search, sort and pages', async () => {
    const b = await seedV1Tenant(t.deps);
    await up(b.live, 'beta.png', fx.png, 'image/png', 'shop');
    await up(b.live, 'alpha.jpg', fx.jpeg, 'image/jpeg', 'shop');
    await up(b.live, 'gamma.mp3', fx.mp3, 'audio/mpeg', 'shop/sounds');
    await up(b.live, 'notes.txt', Buffer.from('hello notes'), 'text/plain');
    const all = (await t.v1('GET', '/cdn/assets', b.live)).json();
    expect(all.total).toBe(4);
    expect(all.items[0].filename).toBe('notes.txt'); // newest first by default
    const shop = (await t.v1('GET', '/cdn/assets?folder=shop&sortBy=filename&sortOrder=asc', b.live)).json();
    expect(shop.items.map((x: { filename: string }) => x.filename)).toEqual(['alpha.jpg', 'beta.png']);
    const audio = (await t.v1('GET', '/cdn/assets?type=audio', b.live)).json();
    expect(audio.items.map((x: { filename: string }) => x.filename)).toEqual(['gamma.mp3']);
    const search = (await t.v1('GET', '/cdn/assets?search=AL', b.live)).json();
    expect(search.items.map((x: { filename: string }) => x.filename)).toEqual(['alpha.jpg']);
    const bySize = (
      await t.v1('GET', '/cdn/assets?sortBy=size&sortOrder=desc&limit=2&offset=1', b.live)
    ).json();
    expect(bySize.items).toHaveLength(2);
    expect(bySize.hasMore).toBe(true);
    for (const q of ['limit=101', 'limit=0', 'sortBy=name', 'type=pdf', 'offset=-1', 'folder=../x']) {
      expect((await t.v1('GET', `/cdn/assets?${q}`, b.live)).statusCode, q).toBe(400);
    }
    // The sandbox (test key) sees none of production's assets.
    expect((await t.v1('GET', '/cdn/assets', b.test)).json().total).toBe(0);
  });

  it('patches metadata, moves, deletes one and many', async () => {
    const c = await seedV1Tenant(t.deps);
    const x = await up(c.live, 'x.png', fx.png, 'image/png');
    const y = await up(c.live, 'y.png', fx.png, 'image/png');
    const z = await up(c.live, 'z.png', fx.png, 'image/png');
    const p = await t.v1('PATCH', `/cdn/assets/${x.assetId}`, c.live, { metadata: { alt: 'A red box' } });
    expect(p.json().metadata).toEqual({ alt: 'A red box' });
    expect((await t.v1('PATCH', `/cdn/assets/${x.assetId}`, c.live, {})).statusCode).toBe(400);
    const mv = await t.v1('POST', '/cdn/assets/move', c.live, {
      assetIds: [x.assetId, y.assetId],
      folder: '/a/b/',
    });
    expect(mv.json()).toEqual({ success: true, moved: 2, notFound: [] });
    expect((await t.v1('GET', `/cdn/assets/${y.assetId}`, c.live)).json().folder).toBe('a/b');
    const del = await t.v1('DELETE', `/cdn/assets/${z.assetId}`, c.live);
    expect(del.json()).toEqual({ success: true });
    expect((await getCdn(t, z.cdnUrl)).statusCode).toBe(404);
    expect((await t.v1('DELETE', `/cdn/assets/${z.assetId}`, c.live)).statusCode).toBe(404);
    const many = await t.v1('POST', '/cdn/assets/delete', c.live, {
      assetIds: [x.assetId, y.assetId, z.assetId],
    });
    expect(many.json()).toEqual({ success: true, deleted: 2, notFound: [z.assetId] });
    expect((await t.v1('GET', '/cdn/assets', c.live)).json().total).toBe(0);
    expect((await t.v1('POST', '/cdn/assets/delete', c.live, { assetIds: [] })).statusCode).toBe(400);
  });

  it('gives a file named ".." or "." a cdnUrl that no URL parser resolves away', async () => {
    for (const name of ['..', '.']) {
      const asset = await up(a.live, name, fx.png, 'image/png');
      expect(asset.filename).toBe(name);
      // What a browser or fetch would request: the id and a last segment survive normalisation.
      const parsed = new URL(asset.cdnUrl);
      expect(parsed.pathname).toBe(`/cdn/${asset.assetId}/_${name}`);
      const got = await getCdn(t, parsed.href);
      expect([got.statusCode, got.headers['content-type']]).toEqual([200, 'image/png']);
    }
  });

  it('serves SVG sandboxed and risky types as attachments', async () => {
    const svg = await up(a.live, 'logo.svg', fx.svg, 'image/svg+xml');
    expect(svg.mimeType).toBe('image/svg+xml');
    const got = await getCdn(t, svg.cdnUrl);
    expect(got.headers['content-security-policy']).toMatch(/sandbox/);
    expect(got.headers['content-security-policy']).toMatch(/default-src 'none'/);
    const html = await up(
      a.live,
      'page.html',
      Buffer.from('<html><script>alert(1)</script></html>'),
      'text/html',
    );
    const page = await getCdn(t, html.cdnUrl);
    expect(page.headers['content-disposition']).toMatch(/^attachment; filename\*=UTF-8''page\.html$/);
    expect(page.headers['content-security-policy']).toBe('sandbox');
    // A "PNG" that is really text is not served as an image.
    const fake = await up(a.live, 'fake.png', Buffer.from('just text'), 'image/png');
    expect(fake.type).toBe('other');
    expect((await getCdn(t, fake.cdnUrl)).headers['content-disposition']).toMatch(/^attachment/);
  });

  it('reports storage usage by type, environment, folder and project; derived objects counted', async () => {
    const d = await seedV1Tenant(t.deps);
    const prj = await seedProject(t.deps, d.org);
    await up(d.live, 'a.png', fx.png, 'image/png', 'site/img');
    await up(d.live, 'b.mp3', fx.mp3, 'audio/mpeg', 'site');
    await up(d.test, 'c.png', fx.png, 'image/png');
    const projUp = await t.v1('POST', '/cdn/upload', d.live, {
      filename: 'p.png',
      mimeType: 'image/png',
      size: fx.png.length,
      projectSlug: prj.slug,
    });
    expect(projUp.statusCode).toBe(200);
    await storeAsset(t.deps, {
      orgId: d.org.id,
      environment: 'production',
      bytes: fx.mp4,
      filename: 'merged.mp4',
      mimeType: 'video/mp4',
      origin: 'derived',
      projectId: prj.id,
    });
    const all = (await t.v1('GET', '/cdn/usage/storage', d.live)).json();
    const total = fx.png.length * 2 + fx.mp3.length + fx.mp4.length;
    expect(all).toMatchObject({
      totalBytes: total,
      objectCount: 4,
      unmeasuredAssets: 0,
      environment: null,
      folder: null,
      breakdown: { derived: { bytes: fx.mp4.length, objectCount: 1 } },
      byType: { image: { bytes: fx.png.length * 2, objectCount: 2 }, audio: { objectCount: 1 } },
    });
    expect(all.totalFormatted).toMatch(/KB$/);
    const prod = (await t.v1('GET', '/cdn/usage/storage?environment=production', d.live)).json();
    expect(prod.objectCount).toBe(3);
    const site = (await t.v1('GET', '/cdn/usage/storage?folder=site', d.live)).json();
    expect(site.objectCount).toBe(2);
    const img = (await t.v1('GET', '/cdn/usage/storage?folder=site/img', d.live)).json();
    expect(img.objectCount).toBe(1);
    const proj = (await t.v1('GET', `/cdn/usage/storage?projectSlug=${prj.slug}`, d.live)).json();
    expect(proj).toMatchObject({ objectCount: 1, projectSlug: prj.slug }); // the pending upload is not counted
    const other = await seedV1Tenant(t.deps);
    const foreign = await t.v1('GET', `/cdn/usage/storage?projectSlug=${prj.slug}`, other.live);
    expect([foreign.statusCode, foreign.json().error.code]).toEqual([404, 'PROJECT_NOT_FOUND']);
    expect((await t.v1('GET', '/cdn/usage/storage?environment=staging', d.live)).statusCode).toBe(400);
  });
});
