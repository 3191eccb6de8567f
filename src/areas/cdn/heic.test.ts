import fs from 'node:fs';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCdn, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { heifExtent, heifIcc } from './heic.ts';

// HEIC in: an iPhone-like photo (HEVC, made by Debian's heif-enc and committed, so CI needs no encoder) is
// confirmed with its upright size and a placeholder, transforms like any photo, keeps its orientation, and
// hostile variants (a decompression bomb, a cut-off file) are refused without decoding them.

// 64×48 landscape pixels (red top-left quadrant, green bottom-right corner, blue elsewhere) stored with an
// `irot` of 270° and an EXIF orientation 6, as an iPhone stores a portrait shot: upright it is 48×64 with
// red at the top right. test/fixtures/cdn/add-irot.mjs says how it was made.
const PORTRAIT = fs.readFileSync(new URL('../../../test/fixtures/cdn/iphone-portrait.heic', import.meta.url));

/** The same file with every `ispe` claiming 20000×20000 pixels: 400 MP to decode, 1.4 KB to send. */
function bomb(): Buffer {
  const b = Buffer.from(PORTRAIT);
  for (let at = b.indexOf('ispe'); at >= 0; at = b.indexOf('ispe', at + 4)) {
    b.writeUInt32BE(20_000, at + 8);
    b.writeUInt32BE(20_000, at + 12);
  }
  return b;
}

/** Which corner colours a picture has: r, g, b or - per corner (tl, tr, bl, br). */
async function corners(body: Buffer) {
  const { data, info } = await sharp(body).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => {
    const i = (y * info.width + x) * 3;
    const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
    return r > 160 && g < 90 ? 'r' : g > 160 && r < 90 ? 'g' : b > 160 && r < 90 ? 'b' : '-';
  };
  const [w, h] = [info.width - 2, info.height - 2];
  return {
    width: info.width,
    height: info.height,
    corners: [at(1, 1), at(w, 1), at(1, h), at(w, h)].join(''),
  };
}

describe('CDN: HEIC/HEIF input', () => {
  let t: TestApp;
  let a: V1Tenant;
  let id: string;

  beforeAll(async () => {
    t = await testApp();
    a = await seedV1Tenant(t.deps);
    const up = await uploadAsset(t, a.live, {
      filename: 'IMG_0001.HEIC',
      mimeType: 'image/heic',
      bytes: PORTRAIT,
    });
    expect(up.confirm!.statusCode, up.confirm!.body).toBe(200);
    id = up.confirm!.json().assetId;
  });
  afterAll(() => t.close());

  const transform = async (assetId: string, options: Record<string, unknown>, accept = '*/*') => {
    const r = await t.v1('POST', '/cdn/transform', a.live, { assetId, options });
    expect(r.statusCode, r.body).toBe(200);
    return getCdn(t, r.json().url, { accept });
  };

  it('reads the ispe size from the header without decoding', () => {
    // heif-enc codes 64×64 (whole coding blocks) and declares the 64×48 grid over it: the larger is allocated.
    expect(heifExtent(PORTRAIT)).toEqual({ width: 64, height: 64 });
    expect(heifExtent(bomb())).toEqual({ width: 20_000, height: 20_000 });
    expect(heifExtent(Buffer.from('not a heif at all'))).toBeNull();
  });

  it('confirms an iPhone HEIC as a ready image, upright size and a placeholder', async () => {
    const asset = (await t.v1('GET', `/cdn/assets/${id}`, a.live)).json();
    expect(asset).toMatchObject({
      status: 'ready',
      mimeType: 'image/heic',
      type: 'image',
      width: 48,
      height: 64,
    });
    expect(asset.placeholder).toMatch(/^data:image\/webp;base64,/);
    const lqip = await corners(Buffer.from(asset.placeholder.split(',')[1], 'base64'));
    expect([lqip.width, lqip.height]).toEqual([12, 16]);
  });

  it('transforms it as a photo: JPEG by default, rotated once (irot applied, EXIF orientation not again)', async () => {
    const r = await transform(id, { width: 24 });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers['content-type']).toBe('image/jpeg');
    expect(await corners(r.rawPayload)).toEqual({ width: 24, height: 32, corners: 'brgb' });
    const webp = await transform(id, { width: 30, height: 30, fit: 'cover', format: 'webp' });
    expect(webp.headers['content-type']).toBe('image/webp');
    const meta = await sharp(webp.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['webp', 30, 30, false]);
    const auto = await transform(id, { width: 12, format: 'auto' }, 'image/avif,image/webp,*/*');
    expect(auto.headers['content-type']).toBe('image/avif');
  });

  it('converts a Display P3 HEIC to sRGB (its colr ICC profile applied): P3 red stays full red', async () => {
    // 64×48 of sRGB #ff0000 stored as Display P3 numbers (234, 51, 35) with the P3 profile in `colr`.
    const p3 = fs.readFileSync(new URL('../../../test/fixtures/cdn/display-p3-red.heic', import.meta.url));
    expect(heifIcc(p3)?.length).toBeGreaterThan(100);
    const up = await uploadAsset(t, a.live, { filename: 'red.heic', mimeType: 'image/heic', bytes: p3 });
    const r = await transform(up.confirm!.json().assetId, { width: 32, format: 'png' });
    const { data } = await sharp(r.rawPayload).raw().toBuffer({ resolveWithObject: true });
    const [red, green, blue] = [data[0]!, data[1]!, data[2]!];
    // Read as sRGB without the profile it would be (234, 51, 35): visibly duller.
    expect(red).toBeGreaterThan(245);
    expect(green).toBeLessThan(20);
    expect(blue).toBeLessThan(20);
  });

  it('refuses a HEIC decompression bomb by its header: 413, no decode', async () => {
    const up = await uploadAsset(t, a.live, { filename: 'bomb.heic', mimeType: 'image/heic', bytes: bomb() });
    const asset = up.confirm!.json();
    expect(asset).toMatchObject({ status: 'ready', width: 20_000, height: 20_000, placeholder: null });
    const started = performance.now();
    const r = await transform(asset.assetId, { width: 100 });
    expect(r.statusCode).toBe(413);
    expect(r.json().error.code).toBe('IMAGE_TOO_LARGE');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('marks a cut-off HEIC failed at confirm', async () => {
    const cut = PORTRAIT.subarray(0, PORTRAIT.length - 150);
    const up = await uploadAsset(t, a.live, { filename: 'cut.heic', mimeType: 'image/heic', bytes: cut });
    expect(up.confirm!.json()).toMatchObject({ status: 'failed' });
    expect(up.confirm!.json().error).toMatch(/could not be decoded/);
  });
});
