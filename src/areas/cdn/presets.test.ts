import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCdn, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { signWithUrlKey } from './url-keys.ts';

// Variant URLs an app builds without an API call per variant: named presets (`?p=<name>`, unsigned) and URLs
// signed with the organization's own key. Tenant isolation on both, and nothing secret at rest.

describe('CDN presets and app-signed transform URLs', () => {
  let t: TestApp;
  let a: V1Tenant;
  let b: V1Tenant;
  let assetId: string;
  let otherAsset: string;
  const base = 'http://pier.test';

  beforeAll(async () => {
    t = await testApp();
    a = await seedV1Tenant(t.deps);
    b = await seedV1Tenant(t.deps);
    const bytes = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    assetId = (
      await uploadAsset(t, a.live, { filename: 'p.png', mimeType: 'image/png', bytes })
    ).confirm!.json().assetId;
    otherAsset = (
      await uploadAsset(t, b.live, { filename: 'q.png', mimeType: 'image/png', bytes })
    ).confirm!.json().assetId;
  });
  afterAll(() => t.close());

  const size = async (body: Buffer) => {
    const m = await sharp(body).metadata();
    return [m.format, m.width, m.height];
  };

  it('saves a preset and renders it from an unsigned ?p= URL; options in the URL override it', async () => {
    const put = await t.v1('PUT', '/cdn/presets/thumb', a.live, {
      options: { width: 60, height: 40, fit: 'cover', format: 'webp' },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ name: 'thumb', options: { width: 60, format: 'webp' } });
    expect(
      (await t.v1('GET', '/cdn/presets', a.live)).json().items.map((p: { name: string }) => p.name),
    ).toEqual(['thumb']);
    const minted = (
      await t.v1('POST', '/cdn/transform', a.live, { assetId, options: { preset: 'thumb' } })
    ).json();
    expect(minted.url).toBe(`${base}/cdn/t/${assetId}?p=thumb`);
    const r = await getCdn(t, minted.url);
    expect(r.statusCode).toBe(200);
    expect(await size(r.rawPayload)).toEqual(['webp', 60, 40]);
    const over = (
      await t.v1('POST', '/cdn/transform', a.live, { assetId, options: { preset: 'thumb', width: 30 } })
    ).json();
    expect(over.url).toMatch(/p=thumb&sig=/);
    expect(await size((await getCdn(t, over.url)).rawPayload)).toEqual(['webp', 30, 40]);
    // An unsigned URL may name a preset, nothing more.
    expect((await getCdn(t, `${minted.url}&w=4000`)).statusCode).toBe(403);
    // Replacing the preset changes what its URL renders.
    await t.v1('PUT', '/cdn/presets/thumb', a.live, { options: { width: 20, format: 'png' } });
    expect(await size((await getCdn(t, minted.url)).rawPayload)).toEqual(['png', 20, 13]);
  });

  it('keeps presets per tenant and answers 404 for a missing or deleted one', async () => {
    await t.v1('PUT', '/cdn/presets/bonly', b.live, { options: { width: 10 } });
    const foreign = await getCdn(t, `${base}/cdn/t/${assetId}?p=bonly`);
    expect([foreign.statusCode, foreign.json().error.code]).toEqual([404, 'PRESET_NOT_FOUND']);
    const mint = await t.v1('POST', '/cdn/transform', a.live, { assetId, options: { preset: 'bonly' } });
    expect([mint.statusCode, mint.json().error.code]).toEqual([404, 'PRESET_NOT_FOUND']);
    expect((await t.v1('GET', '/cdn/presets', a.test)).json().items).toEqual([]);
    expect((await t.v1('DELETE', '/cdn/presets/bonly', a.live)).statusCode).toBe(404);
    await t.v1('PUT', '/cdn/presets/gone', a.live, { options: { width: 10 } });
    expect((await getCdn(t, `${base}/cdn/t/${assetId}?p=gone`)).statusCode).toBe(200);
    expect((await t.v1('DELETE', '/cdn/presets/gone', a.live)).json()).toEqual({ success: true });
    expect((await getCdn(t, `${base}/cdn/t/${assetId}?p=gone`)).statusCode).toBe(404);
  });

  it('validates preset names and options', async () => {
    for (const [name, options] of [
      ['Bad Name', { width: 10 }],
      ['-x', { width: 10 }],
      ['ok', { width: 5000 }],
      ['ok', { preset: 'thumb' }],
      ['ok', { rotate: 90 }],
    ] as const) {
      const r = await t.v1('PUT', `/cdn/presets/${encodeURIComponent(name)}`, a.live, { options });
      expect([r.statusCode, r.json().error.code], name + JSON.stringify(options)).toEqual([
        400,
        'VALIDATION_ERROR',
      ]);
    }
  });

  it('renders a URL the app signed with its own key, in any parameter order', async () => {
    const created = await t.v1('POST', '/cdn/url-keys', a.live, { label: 'web' });
    expect(created.statusCode, created.body).toBe(201);
    const { keyId, secret } = created.json();
    expect(secret).toMatch(/^cdnk_/);
    const build = (id: string, query: string, s = secret) =>
      `${base}/cdn/t/${id}?${query}&sig=${signWithUrlKey(s, id, query)}`;
    for (const q of [`w=50&f=png&key=${keyId}`, `key=${keyId}&f=png&w=50`]) {
      const r = await getCdn(t, build(assetId, q));
      expect(r.statusCode, r.body).toBe(200);
      expect(await size(r.rawPayload)).toEqual(['png', 50, 33]);
    }
    // With a preset too: the app's key lifts the "preset alone" rule.
    await t.v1('PUT', '/cdn/presets/small', a.live, { options: { width: 40, format: 'jpeg' } });
    const withPreset = await getCdn(t, build(assetId, `p=small&g=1&key=${keyId}`));
    expect(await size(withPreset.rawPayload)).toEqual(['jpeg', 40, 27]);
    // Tampering, a wrong secret, another tenant's asset: the same 403.
    const good = build(assetId, `w=51&key=${keyId}`);
    for (const bad of [
      good.replace('w=51', 'w=52'),
      build(assetId, `w=51&key=${keyId}`, 'cdnk_wrong'),
      build(otherAsset, `w=51&key=${keyId}`),
      `${good}&h=10`,
    ]) {
      const r = await getCdn(t, bad);
      expect([r.statusCode, r.json().error.code], bad).toEqual([403, 'SIGNATURE_INVALID']);
    }
    // Listed without the secret; stored encrypted; deleted keys stop signing; other tenants cannot delete.
    const list = (await t.v1('GET', '/cdn/url-keys', a.live)).json();
    expect(list.items).toEqual([{ keyId, label: 'web', createdAt: expect.any(String) }]);
    const { rows } = await t.deps.db.query<{ secret_enc: string }>('SELECT secret_enc FROM cdn_url_keys');
    expect(rows.some((r) => r.secret_enc.includes(secret.slice(5)))).toBe(false);
    expect((await t.v1('DELETE', `/cdn/url-keys/${keyId}`, b.live)).statusCode).toBe(404);
    expect((await t.v1('GET', '/cdn/url-keys', a.test)).json().items).toEqual([]);
    expect((await t.v1('DELETE', `/cdn/url-keys/${keyId}`, a.live)).json()).toEqual({ success: true });
    expect((await getCdn(t, build(assetId, `w=53&key=${keyId}`))).statusCode).toBe(403);
    expect((await t.v1('DELETE', `/cdn/url-keys/${keyId}`, a.live)).json().error.code).toBe(
      'URL_KEY_NOT_FOUND',
    );
  });
});
