import crypto from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixtures, fixtures, getCdn, putTo, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { startTestS3, type TestS3 } from '../../../test/s3-server.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import type { ManualClock } from '../../core/clock.ts';

// Upload → PUT → confirm on both blob drivers, with real sharp, file-type and ffprobe: sniffing corrects
// false declarations, media are measured, undecodable media fail, sizes are enforced on the bytes.

describe.each(['disk', 's3'] as const)('CDN uploads on the %s driver', (driver) => {
  let t: TestApp;
  let s3: TestS3 | undefined;
  let fx: Fixtures;
  let a: V1Tenant;

  beforeAll(async () => {
    s3 = driver === 's3' ? await startTestS3() : undefined;
    t = await testApp({ env: s3?.env });
    fx = await fixtures();
    a = await seedV1Tenant(t.deps);
  });
  afterAll(async () => {
    await t.close();
    await s3?.close();
  });

  it('serves the presigned URL from the right place', async () => {
    const { up, putStatus } = await uploadAsset(t, a.live, {
      filename: 'x.png',
      mimeType: 'image/png',
      bytes: fx.png,
      confirm: false,
    });
    expect(putStatus).toBe(200);
    expect(up.uploadUrl.startsWith(driver === 'disk' ? 'http://pier.test/blobs/' : s3!.env.S3_ENDPOINT)).toBe(
      true,
    );
    expect(up.cdnUrl).toBe(`http://pier.test/cdn/${up.assetId}/x.png`);
    expect(new Date(up.expiresAt).getTime()).toBeGreaterThan(Date.now());
  });

  it('corrects a PNG declared as JPEG and measures it', async () => {
    const { confirm } = await uploadAsset(t, a.live, {
      filename: 'photo.jpg',
      mimeType: 'image/jpeg',
      bytes: fx.png,
      folder: 'pics/2026',
    });
    expect(confirm!.statusCode).toBe(200);
    const asset = confirm!.json();
    expect(asset).toMatchObject({
      mimeType: 'image/png',
      declaredMimeType: 'image/jpeg',
      type: 'image',
      status: 'ready',
      width: 64,
      height: 48,
      size: fx.png.length,
      folder: 'pics/2026',
    });
    const got = await getCdn(t, asset.cdnUrl);
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe('image/png');
    expect(got.rawPayload.equals(fx.png)).toBe(true);
  });

  it('probes video with ffprobe: duration, codecs, dimensions', async () => {
    const { confirm } = await uploadAsset(t, a.live, {
      filename: 'clip.mp4',
      mimeType: 'video/mp4',
      bytes: fx.mp4,
    });
    const v = confirm!.json();
    expect(v).toMatchObject({ type: 'video', status: 'ready', width: 160, height: 120, videoCodec: 'h264' });
    expect(v.audioCodec).toBe('aac');
    expect(v.duration).toBeGreaterThan(0.8);
    expect(v.duration).toBeLessThan(1.5);
  });

  it('probes audio, and marks undecodable "video" as failed with the reason', async () => {
    const audio = (
      await uploadAsset(t, a.live, { filename: 'tone.mp3', mimeType: 'audio/mpeg', bytes: fx.mp3 })
    ).confirm!.json();
    expect(audio).toMatchObject({ type: 'audio', status: 'ready', audioCodec: 'mp3' });
    const junk = Buffer.from('this is not a video at all, just some words '.repeat(50));
    const bad = (
      await uploadAsset(t, a.live, { filename: 'broken.mp4', mimeType: 'video/mp4', bytes: junk })
    ).confirm!.json();
    expect(bad.status).toBe('failed');
    expect(bad.type).toBe('video');
    expect(bad.error).toMatch(/could not be decoded/);
    // A failed asset is not delivered.
    expect((await getCdn(t, bad.cdnUrl)).statusCode).toBe(404);
  });

  it('marks a truncated JPEG as failed at confirm, and does not deliver it', async () => {
    const photo = await sharp({
      create: { width: 800, height: 600, channels: 3, background: { r: 20, g: 120, b: 200 } },
    })
      .jpeg()
      .toBuffer();
    const cut = photo.subarray(0, Math.floor(photo.length * 0.6));
    const bad = (
      await uploadAsset(t, a.live, { filename: 'cut.jpg', mimeType: 'image/jpeg', bytes: cut })
    ).confirm!.json();
    expect(bad).toMatchObject({ status: 'failed', type: 'image', mimeType: 'image/jpeg' });
    expect(bad.error).toMatch(/premature end|truncat/i);
    expect((await getCdn(t, bad.cdnUrl)).statusCode).toBe(404);
    const whole = (
      await uploadAsset(t, a.live, { filename: 'ok.jpg', mimeType: 'image/jpeg', bytes: photo })
    ).confirm!.json();
    expect(whole).toMatchObject({ status: 'ready', width: 800, height: 600 });
  });

  it("marks a truncated PNG as failed at confirm (its header reads fine, like a JPEG's)", async () => {
    const noise = { type: 'gaussian' as const, mean: 128, sigma: 60 };
    const png = await sharp({ create: { width: 200, height: 150, channels: 3, background: '#888', noise } })
      .png()
      .toBuffer();
    const cut = png.subarray(0, Math.floor(png.length * 0.6));
    const bad = (
      await uploadAsset(t, a.live, { filename: 'cut.png', mimeType: 'image/png', bytes: cut })
    ).confirm!.json();
    expect(bad).toMatchObject({ status: 'failed', type: 'image', mimeType: 'image/png' });
    expect((await getCdn(t, bad.cdnUrl)).statusCode).toBe(404);
  });

  it('confirming twice, confirming nothing and confirming after expiry each get their own 4xx', async () => {
    const { up, confirm } = await uploadAsset(t, a.live, {
      filename: 'a.png',
      mimeType: 'image/png',
      bytes: fx.png,
    });
    expect(confirm!.statusCode).toBe(200);
    const again = await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {});
    expect([again.statusCode, again.json().error.code]).toEqual([409, 'UPLOAD_ALREADY_CONFIRMED']);

    const empty = await t.v1('POST', '/cdn/upload', a.live, {
      filename: 'b.png',
      mimeType: 'image/png',
      size: 10,
    });
    const none = await t.v1('POST', `/cdn/upload/${empty.json().assetId}/confirm`, a.live, {});
    expect([none.statusCode, none.json().error.code]).toEqual([409, 'UPLOAD_INCOMPLETE']);

    const late = await uploadAsset(t, a.live, {
      filename: 'c.png',
      mimeType: 'image/png',
      bytes: fx.png,
      confirm: false,
    });
    (t.clock as ManualClock).advance(3601_000);
    const expired = await t.v1('POST', `/cdn/upload/${late.up.assetId}/confirm`, a.live, {});
    expect([expired.statusCode, expired.json().error.code]).toEqual([400, 'UPLOAD_EXPIRED']);
    expect((await t.v1('GET', `/cdn/assets/${late.up.assetId}`, a.live)).statusCode).toBe(404);
    expect(await t.deps.blobs.head(`cdn/${a.org.id}/${late.up.assetId}/c.png`)).toBeNull();
    expect(await t.deps.blobs.head(`cdn-upload/${a.org.id}/${late.up.assetId}/c.png`)).toBeNull();
  });

  it('refuses more bytes than declared and leaves nothing stored', async () => {
    const { up, putStatus, confirm } = await uploadAsset(t, a.live, {
      filename: 'big.bin',
      mimeType: 'application/octet-stream',
      bytes: Buffer.alloc(1025, 7),
      size: 1024,
    });
    if (driver === 'disk') {
      // Pier's signed URL refuses the body itself.
      expect(putStatus).toBe(413);
      expect(confirm!.json().error.code).toBe('UPLOAD_INCOMPLETE');
    } else {
      // S3 stored it; confirm measures, deletes and refuses.
      expect([confirm!.statusCode, confirm!.json().error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
      expect((await t.v1('GET', `/cdn/assets/${up.assetId}`, a.live)).statusCode).toBe(404);
    }
    expect(await t.deps.blobs.head(`cdn/${a.org.id}/${up.assetId}/big.bin`)).toBeNull();
    expect(await t.deps.blobs.head(`cdn-upload/${a.org.id}/${up.assetId}/big.bin`)).toBeNull();
  });

  it('an upload URL is single-use: a second PUT after confirm never changes what is delivered', async () => {
    const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
    const { up, confirm } = await uploadAsset(t, a.live, {
      filename: 'safe.png',
      mimeType: 'image/png',
      bytes: fx.png,
    });
    const asset = confirm!.json();
    expect(asset).toMatchObject({ status: 'ready', size: fx.png.length });
    // Same length (HTML posing as the PNG) and shorter (would break every later GET mid-response).
    const html = Buffer.alloc(fx.png.length, ' ');
    html.write('<html><script>alert(1)</script></html>');
    for (const swap of [html, Buffer.from('<b>hi</b>')]) {
      const base = t.deps.config.publicUrl;
      if (driver === 'disk') {
        const res = await t.app.inject({
          method: 'PUT',
          url: up.uploadUrl.slice(base.length),
          headers: up.uploadHeaders,
          payload: swap,
        });
        expect([res.statusCode, res.json().error.code]).toEqual([409, 'UPLOAD_URL_USED']);
      } else {
        // S3 cannot refuse a presigned PUT; it lands under the upload key, which nothing delivers.
        expect(await putTo(t, up.uploadUrl, up.uploadHeaders, swap)).toBe(200);
      }
      const got = await getCdn(t, asset.cdnUrl);
      expect(got.statusCode).toBe(200);
      expect(got.headers['content-type']).toBe('image/png');
      expect(got.headers['content-length']).toBe(String(fx.png.length));
      expect(sha(got.rawPayload)).toBe(sha(fx.png));
      const row = (await t.v1('GET', `/cdn/assets/${up.assetId}`, a.live)).json();
      expect(row).toMatchObject({ size: fx.png.length, mimeType: 'image/png', status: 'ready' });
    }
    const again = await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {});
    expect(again.json().error.code).toBe('UPLOAD_ALREADY_CONFIRMED');
    // Deleting the asset removes a stray upload too.
    await t.v1('DELETE', `/cdn/assets/${up.assetId}`, a.live);
    expect(await t.deps.blobs.head(`cdn-upload/${a.org.id}/${up.assetId}/safe.png`)).toBeNull();
  });

  it.runIf(driver === 'disk')(
    'the disk URL takes one complete upload even before confirm, and a refused one can be retried',
    async () => {
      const up = (
        await t.v1('POST', '/cdn/upload', a.live, {
          filename: 'r.png',
          mimeType: 'image/png',
          size: fx.png.length,
        })
      ).json();
      const tooBig = Buffer.concat([fx.png, Buffer.from('x')]);
      expect(await putTo(t, up.uploadUrl, up.uploadHeaders, tooBig)).toBe(413);
      expect(await putTo(t, up.uploadUrl, up.uploadHeaders, fx.png)).toBe(200);
      expect(await putTo(t, up.uploadUrl, up.uploadHeaders, fx.jpeg)).toBe(409);
      const confirm = await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {});
      expect(confirm.json()).toMatchObject({ status: 'ready', mimeType: 'image/png', size: fx.png.length });
      // A tampered once flag breaks the signature instead of lifting the limit.
      const tampered = up.uploadUrl.replace('once=1', 'once=0').slice(t.deps.config.publicUrl.length);
      const res = await t.app.inject({
        method: 'PUT',
        url: tampered,
        headers: up.uploadHeaders,
        payload: fx.png,
      });
      expect([res.statusCode, res.json().error.code]).toEqual([403, 'SIGNATURE_INVALID']);
    },
  );

  it('refuses a declared size over 100 MB, and a 100 MB + 1 byte body against a 100 MB declaration', async () => {
    const max = 100 * 1024 * 1024;
    const over = await t.v1('POST', '/cdn/upload', a.live, {
      filename: 'h.bin',
      mimeType: 'video/mp4',
      size: max + 1,
    });
    expect([over.statusCode, over.json().error.code]).toEqual([400, 'VALIDATION_ERROR']);
    if (driver === 'disk') {
      const ok = (
        await t.v1('POST', '/cdn/upload', a.live, { filename: 'h.bin', mimeType: 'video/mp4', size: max })
      ).json();
      const status = await putTo(
        t,
        ok.uploadUrl,
        { ...ok.uploadHeaders, 'content-length': String(max + 1) },
        Buffer.alloc(0),
      );
      expect(status).toBe(413);
      expect(await t.deps.blobs.head(`cdn/${a.org.id}/${ok.assetId}/h.bin`)).toBeNull();
    }
  });

  it('rejects bad input with 400, never 500', async () => {
    for (const body of [
      {},
      { filename: 'a', mimeType: 'nope', size: 1 },
      { filename: 'a/b', mimeType: 'image/png', size: 1 },
      { filename: 'a', mimeType: 'image/png', size: 0 },
      { filename: 'a', mimeType: 'image/png', size: 1, folder: '../up' },
    ]) {
      const r = await t.v1('POST', '/cdn/upload', a.live, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
    }
    const unknownProject = await t.v1('POST', '/cdn/upload', a.live, {
      filename: 'a',
      mimeType: 'image/png',
      size: 1,
      projectSlug: 'nope',
    });
    expect(unknownProject.json().error.code).toBe('PROJECT_NOT_FOUND');
  });
  it('delivers with Range, ETag/304, immutable caching and nosniff', async () => {
    const { confirm } = await uploadAsset(t, a.live, {
      filename: 'clip.mp4',
      mimeType: 'video/mp4',
      bytes: fx.mp4,
    });
    const url = confirm!.json().cdnUrl;
    const full = await getCdn(t, url);
    expect(full.statusCode).toBe(200);
    expect(full.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(full.headers['x-content-type-options']).toBe('nosniff');
    expect(full.headers['content-type']).toBe('video/mp4');
    expect(full.headers['content-disposition']).toBeUndefined();
    const part = await getCdn(t, url, { range: 'bytes=10-19' });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${fx.mp4.length}`);
    expect(part.rawPayload.equals(fx.mp4.subarray(10, 20))).toBe(true);
    const tail = await getCdn(t, url, { range: 'bytes=-5' });
    expect(tail.rawPayload.equals(fx.mp4.subarray(-5))).toBe(true);
    expect((await getCdn(t, url, { range: `bytes=${fx.mp4.length}-` })).statusCode).toBe(416);
    const again = await getCdn(t, url, { 'if-none-match': String(full.headers.etag) });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect(again.headers.etag).toBe(full.headers.etag);
    const etag = String(full.headers.etag);
    expect((await getCdn(t, url, { 'if-none-match': `"nope", W/${etag}` })).statusCode).toBe(304);
    expect((await getCdn(t, url, { 'if-none-match': '"nope", W/"other"' })).statusCode).toBe(200);
    // If-Modified-Since: not modified at or after Last-Modified, modified before it.
    const lastModified = String(full.headers['last-modified']);
    expect((await getCdn(t, url, { 'if-modified-since': lastModified })).statusCode).toBe(304);
    const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
    expect((await getCdn(t, url, { 'if-modified-since': earlier })).statusCode).toBe(200);
    expect((await getCdn(t, url, { 'if-modified-since': 'not a date' })).statusCode).toBe(200);
    // If-None-Match decides alone when both are sent.
    const both = await getCdn(t, url, { 'if-none-match': '"nope"', 'if-modified-since': lastModified });
    expect(both.statusCode).toBe(200);
  });
});
