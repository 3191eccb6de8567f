import crypto from 'node:crypto';
import http from 'node:http';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { startTestS3, type TestS3 } from '../../../test/s3-server.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import type { ManualClock } from '../../core/clock.ts';
import { discardAbandonedUploads } from './jobs.ts';
import { cdnAssets } from './tables.ts';

// Resumable uploads (tus 1.0 core + termination + expiration) over a real listening server, on the disk and
// the S3 driver: a PATCH cut off mid-body keeps what arrived and the upload resumes from that offset; wrong
// offsets are 409; the confirmed asset is byte-identical; a confirmed upload cannot be written again.

const TUS = { 'Tus-Resumable': '1.0.0' };
const BODY = { ...TUS, 'Content-Type': 'application/offset+octet-stream' };

describe.each(['disk', 's3'] as const)('CDN resumable uploads on the %s driver', (driver) => {
  let t: TestApp;
  let s3: TestS3 | undefined;
  let a: V1Tenant;
  let photo: Buffer;

  beforeAll(async () => {
    s3 = driver === 's3' ? await startTestS3() : undefined;
    t = await testApp({ env: s3?.env, listen: true });
    a = await seedV1Tenant(t.deps);
    // About 300 KB of JPEG that confirm decodes in full (noise does not compress).
    photo = await sharp({
      create: {
        width: 500,
        height: 400,
        channels: 3,
        background: '#888',
        noise: { type: 'gaussian', mean: 128, sigma: 60 },
      },
    })
      .jpeg({ quality: 95 })
      .toBuffer();
  });
  afterAll(async () => {
    await t.close();
    await s3?.close();
  });

  const local = (url: string) => url.replace(t.deps.config.publicUrl, t.url);
  const begin = async (size = photo.length, extra: Record<string, unknown> = {}) => {
    const r = await t.v1('POST', '/cdn/upload', a.live, {
      filename: 'big.jpg',
      mimeType: 'image/jpeg',
      size,
      resumable: true,
      ...extra,
    });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as {
      uploadUrl: string;
      uploadHeaders: Record<string, string>;
      assetId: string;
      cdnUrl: string;
    };
  };
  const head = (url: string) => fetch(local(url), { method: 'HEAD', headers: TUS });
  const patch = (url: string, offset: number, body: Buffer, headers: Record<string, string> = BODY) =>
    fetch(local(url), {
      method: 'PATCH',
      headers: { ...headers, 'Upload-Offset': String(offset) },
      body: new Uint8Array(body),
    });

  /** A PATCH announcing the whole rest that sends `sent` bytes, then drops the connection. */
  const cutPatch = (url: string, offset: number, rest: Buffer, sent: number) =>
    new Promise<void>((resolve) => {
      const req = http.request(local(url), {
        method: 'PATCH',
        headers: { ...BODY, 'Upload-Offset': String(offset), 'Content-Length': String(rest.length) },
      });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(rest.subarray(0, sent), () => setTimeout(() => req.destroy(), 150));
      req.on('close', () => resolve());
    });

  it('resumes a cut-off upload from its offset; the confirmed asset is byte-identical', async () => {
    const up = await begin();
    expect(up.uploadUrl).toMatch(/\/cdn\/tus\/[0-9a-f-]{36}\?t=/);
    expect(up.uploadHeaders).toEqual(TUS);
    const first = await head(up.uploadUrl);
    expect(first.status).toBe(200);
    expect(first.headers.get('upload-offset')).toBe('0');
    expect(first.headers.get('upload-length')).toBe(String(photo.length));
    expect(first.headers.get('tus-resumable')).toBe('1.0.0');
    expect(new Date(first.headers.get('upload-expires')!).getTime()).toBeGreaterThan(Date.now() + 3600_000);

    // 100 KB in one PATCH, then a second one cut after 64 KB of the rest.
    const a1 = await patch(up.uploadUrl, 0, photo.subarray(0, 100_000));
    expect(a1.status).toBe(204);
    expect(a1.headers.get('upload-offset')).toBe('100000');
    await cutPatch(up.uploadUrl, 100_000, photo.subarray(100_000), 64 * 1024);
    let offset = 0;
    for (let i = 0; i < 50; i++) {
      // The server finishes storing the cut piece just after the connection drops.
      offset = Number((await head(up.uploadUrl)).headers.get('upload-offset'));
      if (offset > 100_000) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(offset).toBeGreaterThan(100_000);
    expect(offset).toBeLessThanOrEqual(100_000 + 64 * 1024);

    // Resuming from anywhere else is refused; confirming early too.
    const wrong = await patch(up.uploadUrl, 100_000, photo.subarray(100_000));
    expect([wrong.status, (await wrong.json()).error.code]).toEqual([409, 'UPLOAD_OFFSET_MISMATCH']);
    const early = await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {});
    expect([early.statusCode, early.json().error.code]).toEqual([409, 'UPLOAD_INCOMPLETE']);

    const rest = await patch(up.uploadUrl, offset, photo.subarray(offset));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-offset')).toBe(String(photo.length));
    // Complete: no more bytes, even at the right offset.
    const more = await patch(up.uploadUrl, photo.length, Buffer.from('x'));
    expect(more.status).toBe(409);

    const done = await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {});
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ status: 'ready', size: photo.length, width: 500, height: 400 });
    const got = Buffer.from(await (await fetch(local(up.cdnUrl))).arrayBuffer());
    expect(crypto.createHash('sha256').update(got).digest('hex')).toBe(
      crypto.createHash('sha256').update(photo).digest('hex'),
    );

    // Single use: a confirmed upload is never written again.
    const after = await patch(up.uploadUrl, photo.length, Buffer.from('x'));
    expect([after.status, (await after.json()).error.code]).toEqual([409, 'UPLOAD_ALREADY_CONFIRMED']);
    expect((await head(up.uploadUrl)).status).toBe(409);
  });

  it('refuses bad requests: size limits, tus version, content type, offsets', async () => {
    const up = await begin(1000);
    const big = await patch(up.uploadUrl, 0, Buffer.alloc(1001));
    expect([big.status, (await big.json()).error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect((await head(up.uploadUrl)).headers.get('upload-offset')).toBe('0');
    const noVersion = await patch(up.uploadUrl, 0, Buffer.alloc(10), {
      'Content-Type': 'application/offset+octet-stream',
    });
    expect(noVersion.status).toBe(412);
    const badType = await patch(up.uploadUrl, 0, Buffer.alloc(10), { ...TUS, 'Content-Type': 'image/jpeg' });
    expect(badType.status).toBe(415);
    const noOffset = await fetch(local(up.uploadUrl), { method: 'PATCH', headers: BODY, body: 'abc' });
    expect([noOffset.status, (await noOffset.json()).error.code]).toEqual([400, 'UPLOAD_OFFSET_MISSING']);
    const ahead = await patch(up.uploadUrl, 5, Buffer.alloc(10));
    expect(ahead.status).toBe(409);

    // Larger than a PUT may be, only resumable; never past 2 GiB.
    const put = await t.v1('POST', '/cdn/upload', a.live, {
      filename: 'v.mp4',
      mimeType: 'video/mp4',
      size: 200 * 2 ** 20,
    });
    expect(put.statusCode).toBe(400);
    expect((await begin(200 * 2 ** 20)).uploadUrl).toMatch(/\/cdn\/tus\//);
    const huge = await t.v1('POST', '/cdn/upload', a.live, {
      filename: 'v.mp4',
      mimeType: 'video/mp4',
      size: 2 ** 31 + 1,
      resumable: true,
    });
    expect(huge.statusCode).toBe(400);
  });

  it("keeps uploads apart: a wrong token or another upload's token is 404, so is another org's confirm", async () => {
    const mine = await begin(100);
    const other = await begin(100);
    const token = new URL(mine.uploadUrl).searchParams.get('t');
    const swapped = other.uploadUrl.replace(/t=.*/, `t=${token}`);
    expect((await head(swapped)).status).toBe(404);
    expect((await patch(swapped, 0, Buffer.alloc(10))).status).toBe(404);
    expect((await head(mine.uploadUrl.replace(/t=.*/, 't=forged'))).status).toBe(404);
    const b = await seedV1Tenant(t.deps);
    const theirs = await t.v1('POST', `/cdn/upload/${mine.assetId}/confirm`, b.live, {});
    expect([theirs.statusCode, theirs.json().error.code]).toEqual([404, 'ASSET_NOT_FOUND']);
  });

  it('terminates an upload with DELETE (tus termination), pieces and row gone', async () => {
    const up = await begin(200);
    expect((await patch(up.uploadUrl, 0, Buffer.alloc(50, 1))).status).toBe(204);
    const del = await fetch(local(up.uploadUrl), { method: 'DELETE', headers: TUS });
    expect(del.status).toBe(204);
    expect((await head(up.uploadUrl)).status).toBe(404);
    expect((await t.v1('GET', `/cdn/assets/${up.assetId}`, a.live)).statusCode).toBe(404);
  });

  it('answers the tus OPTIONS and a cross-origin preflight for PATCH', async () => {
    const up = await begin(10);
    const r = await fetch(local(up.uploadUrl), {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://shop.apps.example',
        'Access-Control-Request-Method': 'PATCH',
        'Access-Control-Request-Headers': 'tus-resumable, upload-offset, content-type',
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('tus-version')).toBe('1.0.0');
    expect(r.headers.get('tus-extension')).toBe('termination,expiration');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-methods')).toMatch(/PATCH/);
    expect(r.headers.get('access-control-allow-headers')).toMatch(/upload-offset/);
    const h = await fetch(local(up.uploadUrl), {
      method: 'HEAD',
      headers: { ...TUS, Origin: 'https://x.example' },
    });
    expect(h.headers.get('access-control-expose-headers')).toMatch(/Upload-Offset/);
  });

  it('records one of two PATCHes racing from the same offset; the other is 409 and its bytes dropped', async () => {
    const up = await begin(1000);
    const [x, y] = await Promise.all([
      patch(up.uploadUrl, 0, Buffer.alloc(600, 1)),
      patch(up.uploadUrl, 0, Buffer.alloc(400, 2)),
    ]);
    expect([x.status, y.status].sort()).toEqual([204, 409]);
    const won = x.status === 204 ? 600 : 400;
    expect((await head(up.uploadUrl)).headers.get('upload-offset')).toBe(String(won));
    const [row] = await t.deps.db.orm.select().from(cdnAssets).where(eq(cdnAssets.id, up.assetId));
    expect(row!.uploadChunks).toHaveLength(1);
  });

  // Last: it moves the clock past every upload's expiry.
  it('expires: 410 after Upload-Expires, and the cleanup removes the row and its stored pieces', async () => {
    const up = await begin(300);
    expect((await patch(up.uploadUrl, 0, Buffer.alloc(120, 7))).status).toBe(204);
    const [row] = await t.deps.db.orm.select().from(cdnAssets).where(eq(cdnAssets.id, up.assetId));
    const pieces = row!.uploadChunks!.map((c) => c.key);
    expect(pieces).toHaveLength(1);
    expect(await t.deps.blobs.head(pieces[0]!)).toMatchObject({ size: 120 });
    (t.clock as ManualClock).advance(24 * 3600_000 + 1000);
    const gone = await head(up.uploadUrl);
    expect(gone.status).toBe(410);
    const late = await patch(up.uploadUrl, 120, Buffer.alloc(10));
    expect([late.status, (await late.json()).error.code]).toEqual([410, 'UPLOAD_URL_EXPIRED']);
    (t.clock as ManualClock).advance(24 * 3600_000 + 1000);
    expect(await discardAbandonedUploads(t.deps)).toBeGreaterThanOrEqual(1);
    expect(await t.deps.blobs.head(pieces[0]!)).toBeNull();
    expect((await head(up.uploadUrl)).status).toBe(404);
  });
});
