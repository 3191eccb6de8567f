import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixtures, fixtures, getCdn, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { startTestS3, type TestS3 } from '../../../test/s3-server.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import type { ManualClock } from '../../core/clock.ts';
import { discardAbandonedUploads } from './jobs.ts';
import { expireTransformCache, settleTransforms, transformStats } from './transform.ts';

// Image transforms with real sharp: signed URLs, option limits, Accept-driven format, the cache (hit,
// 90-day expiry, one render for concurrent identical requests) and decompression bombs, on both blob
// drivers (sharp reads a disk blob by its path, an S3 one from its bytes).

describe.each(['disk', 's3'] as const)('CDN image transforms on the %s driver', (driver) => {
  let t: TestApp;
  let s3: TestS3 | undefined;
  let fx: Fixtures;
  let a: V1Tenant;
  let image: { assetId: string; cdnUrl: string };

  beforeAll(async () => {
    s3 = driver === 's3' ? await startTestS3() : undefined;
    t = await testApp({ env: s3?.env });
    fx = await fixtures();
    a = await seedV1Tenant(t.deps);
    const big = await sharp({
      create: { width: 800, height: 600, channels: 3, background: { r: 10, g: 120, b: 200 } },
    })
      .jpeg()
      .toBuffer();
    image = (
      await uploadAsset(t, a.live, { filename: 'big.jpg', mimeType: 'image/jpeg', bytes: big })
    ).confirm!.json();
  });
  afterAll(async () => {
    await t.close();
    await s3?.close();
  });

  const urlFor = async (options: Record<string, unknown>, assetId = image.assetId) => {
    const r = await t.v1('POST', '/cdn/transform', a.live, { assetId, options });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().url as string;
  };

  it('renders a signed transform once, then serves it from the cache', async () => {
    const url = await urlFor({
      width: 200,
      height: 100,
      fit: 'cover',
      format: 'webp',
      quality: 70,
      grayscale: true,
    });
    expect(url).toMatch(/^http:\/\/pier\.test\/cdn\/t\//);
    const before = transformStats.renders;
    const first = await getCdn(t, url);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('image/webp');
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const meta = await sharp(first.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 200, 100]);
    const second = await getCdn(t, url);
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(transformStats.renders - before).toBe(1);
    expect((await getCdn(t, url, { 'if-none-match': String(first.headers.etag) })).statusCode).toBe(304);
    // A cache revalidating several stored variants sends a list, weak or strong.
    const list = `"other", W/${String(first.headers.etag)}`;
    expect((await getCdn(t, url, { 'if-none-match': list })).statusCode).toBe(304);
    expect((await getCdn(t, url, { 'if-none-match': '"other", "more"' })).statusCode).toBe(200);
  });

  it('renders 20 concurrent identical requests once', async () => {
    const url = await urlFor({ width: 123, blur: 2 });
    const before = transformStats.renders;
    const all = await Promise.all(Array.from({ length: 20 }, () => getCdn(t, url)));
    expect(all.every((r) => r.statusCode === 200)).toBe(true);
    expect(transformStats.renders - before).toBe(1);
  });

  it('picks the format from Accept for format=auto', async () => {
    const url = await urlFor({ width: 50, format: 'auto' });
    const avif = await getCdn(t, url, { accept: 'image/avif,image/webp,*/*' });
    expect(avif.headers['content-type']).toBe('image/avif');
    expect(avif.headers.vary).toBe('Accept');
    const revalidated = await getCdn(t, url, {
      accept: 'image/avif,image/webp,*/*',
      'if-none-match': String(avif.headers.etag),
    });
    expect([revalidated.statusCode, revalidated.headers.vary]).toEqual([304, 'Accept']);
    const webp = await getCdn(t, url, { accept: 'image/webp,*/*' });
    expect(webp.headers['content-type']).toBe('image/webp');
    const plain = await getCdn(t, url, { accept: '*/*' });
    expect(plain.headers['content-type']).toBe('image/jpeg');
  });

  it('expires cached variants after 90 days', async () => {
    const url = await urlFor({ width: 77 });
    await getCdn(t, url);
    await settleTransforms(t.deps.db); // the rendition is stored after the answer
    const before = transformStats.renders;
    (t.clock as ManualClock).advance(91 * 86_400_000);
    expect(await expireTransformCache(t.deps)).toBeGreaterThan(0);
    const again = await getCdn(t, url);
    expect(again.headers['x-cache']).toBe('MISS');
    expect(transformStats.renders - before).toBe(1);
  });

  it('re-renders a variant past 90 days even before the cleanup job has run', async () => {
    const url = await urlFor({ width: 78 });
    await getCdn(t, url);
    await settleTransforms(t.deps.db);
    expect((await getCdn(t, url)).headers['x-cache']).toBe('HIT');
    (t.clock as ManualClock).advance(91 * 86_400_000);
    const before = transformStats.renders;
    expect((await getCdn(t, url)).headers['x-cache']).toBe('MISS');
    expect(transformStats.renders - before).toBe(1);
  });

  it('answers 404 for a deleted asset whose transforms were served before', async () => {
    const bytes = await sharp({
      create: { width: 300, height: 200, channels: 3, background: { r: 1, g: 2, b: 3 } },
    })
      .png()
      .toBuffer();
    const gone = (
      await uploadAsset(t, a.live, { filename: 'gone.png', mimeType: 'image/png', bytes })
    ).confirm!.json();
    const served = await urlFor({ width: 60 }, gone.assetId);
    const unserved = await urlFor({ width: 61 }, gone.assetId);
    expect((await getCdn(t, served)).statusCode).toBe(200);
    await settleTransforms(t.deps.db);
    expect((await t.v1('DELETE', `/cdn/assets/${gone.assetId}`, a.live)).statusCode).toBe(200);
    for (const url of [served, unserved]) {
      const r = await getCdn(t, url);
      expect([r.statusCode, r.json().error.code]).toEqual([404, 'ASSET_NOT_FOUND']);
    }
  });

  it('validates options against the contract', async () => {
    for (const options of [
      { width: 4097 },
      { height: 0 },
      { quality: 0 },
      { quality: 101 },
      { blur: 0.2 },
      { blur: 1001 },
      { fit: 'stretch' },
      { format: 'bmp' },
      { rotate: 90 },
    ]) {
      const r = await t.v1('POST', '/cdn/transform', a.live, { assetId: image.assetId, options });
      expect([r.statusCode, r.json().error.code], JSON.stringify(options)).toEqual([400, 'VALIDATION_ERROR']);
    }
    const audio = (
      await uploadAsset(t, a.live, { filename: 't.mp3', mimeType: 'audio/mpeg', bytes: fx.mp3 })
    ).confirm!.json();
    const notImage = await t.v1('POST', '/cdn/transform', a.live, { assetId: audio.assetId, options: {} });
    expect([notImage.statusCode, notImage.json().error.code]).toEqual([400, 'ASSET_NOT_IMAGE']);
  });

  it('refuses a tampered signature with 403', async () => {
    const url = await urlFor({ width: 100 });
    const bigger = url.replace('w=100', 'w=4000');
    const tampered = await getCdn(t, bigger);
    expect([tampered.statusCode, tampered.json().error.code]).toEqual([403, 'SIGNATURE_INVALID']);
    expect((await getCdn(t, url.replace(/sig=[^&]+/, 'sig=abc'))).statusCode).toBe(403);
    expect((await getCdn(t, `${url}&g=1`)).statusCode).toBe(403);
    const other = await seedV1Tenant(t.deps);
    const foreign = await t.v1('POST', '/cdn/transform', other.live, { assetId: image.assetId, options: {} });
    expect(foreign.statusCode).toBe(404);
  });

  it('refuses a decompression bomb with a 4xx, not an out-of-memory', async () => {
    const bomb = (
      await uploadAsset(t, a.live, { filename: 'bomb.png', mimeType: 'image/png', bytes: fx.bomb })
    ).confirm!.json();
    expect(bomb).toMatchObject({ width: 12_000, height: 12_000, status: 'ready' });
    expect(fx.bomb.length).toBeLessThan(100_000);
    const url = await urlFor({ width: 100 }, bomb.assetId);
    const r = await getCdn(t, url);
    expect([r.statusCode, r.json().error.code]).toEqual([413, 'IMAGE_TOO_LARGE']);
  });

  it('discards uploads never confirmed a day after their URL expired', async () => {
    const pending = await t.v1('POST', '/cdn/upload', a.live, {
      filename: 'p.png',
      mimeType: 'image/png',
      size: 5,
    });
    (t.clock as ManualClock).advance(26 * 3600_000);
    expect(await discardAbandonedUploads(t.deps)).toBeGreaterThanOrEqual(1);
    expect((await t.v1('GET', `/cdn/assets/${pending.json().assetId}`, a.live)).statusCode).toBe(404);
  });
});
