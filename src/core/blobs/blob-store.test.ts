import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { startTestS3, type TestS3 } from '../../../test/s3-server.ts';
import type { ManualClock } from '../clock.ts';
import { ApiError } from '../errors.ts';
import type { BlobStore } from './blob-store.ts';
import type { DiskBlobStore } from './disk.ts';

// One contract, both drivers: disk (through a real Pier app listening on 127.0.0.1) and S3 (s3rver).

type Driver = {
  store: BlobStore;
  /** Presigned URLs of the disk driver name PUBLIC_URL; point them at the listening test server. */
  reach(url: string): string;
  close(): Promise<void>;
};

async function diskDriver(): Promise<Driver & { t: TestApp }> {
  const t = await testApp();
  const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    t,
    store: t.deps.blobs,
    reach: (url) => url.replace('http://pier.test', base),
    close: async () => {
      // fetch keeps connections alive; drop them so closing the app never waits on a client.
      t.app.server.closeAllConnections();
      await t.close();
    },
  };
}

async function s3Driver(): Promise<Driver> {
  const s3: TestS3 = await startTestS3();
  // Through the app's own wiring: S3_BUCKET set → createBlobStore picks the S3 driver.
  const t = await testApp({ env: s3.env });
  return {
    store: t.deps.blobs,
    reach: (u) => u,
    close: async () => {
      // With S3, presigned URLs name the object store and Pier serves no /blobs routes.
      const res = await t.app.inject({ method: 'GET', url: '/blobs/a?exp=1&sig=x' });
      expect(res.json().error.code).toBe('NOT_FOUND');
      await t.close();
      await s3.close();
    },
  };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  return 'no error';
}

describe.each([
  ['disk', diskDriver],
  ['s3', s3Driver],
] as const)('BlobStore contract (%s)', (name, open) => {
  let d: Driver;
  beforeAll(async () => {
    d = await open();
  });
  afterAll(async () => {
    await d?.close();
  });

  it('puts, heads, gets and deletes objects; a missing key is null', async () => {
    const s = d.store;
    expect(s.driver).toBe(name);
    expect(await s.put('a/b/hello.txt', Buffer.from('hello'), { contentType: 'text/plain' })).toEqual({
      size: 5,
      contentType: 'text/plain',
    });
    expect(await s.head('a/b/hello.txt')).toMatchObject({ size: 5, contentType: 'text/plain' });
    const got = await s.get('a/b/hello.txt');
    expect(got).not.toBeNull();
    expect(await text(got!.body)).toBe('hello');
    await s.put('a/b/hello.txt', Readable.from([Buffer.from('hi '), Buffer.from('again')]));
    expect(await text((await s.get('a/b/hello.txt'))!.body)).toBe('hi again');
    await s.delete('a/b/hello.txt');
    expect(await s.head('a/b/hello.txt')).toBeNull();
    expect(await s.get('a/b/hello.txt')).toBeNull();
    await s.delete('a/b/hello.txt'); // deleting twice is fine
    expect(await s.get('never/was')).toBeNull();
  });

  it('reads a byte range', async () => {
    await d.store.put('range.bin', Buffer.from('0123456789'));
    const part = await d.store.get('range.bin', { range: { start: 2, end: 5 } });
    expect(await text(part!.body)).toBe('2345');
    expect(part!.size).toBe(10);
  });

  it('refuses keys that could escape the store', async () => {
    for (const key of [
      '../x',
      'a/../../x',
      '/etc/passwd',
      'a//b',
      'a/./b',
      '',
      'sp ace',
      'a\\b',
      'é',
      'x'.repeat(513),
    ]) {
      expect(await codeOf(d.store.put(key, Buffer.from('x'))), key).toBe('INVALID_BLOB_KEY');
      expect(await codeOf(d.store.get(key)), key).toBe('INVALID_BLOB_KEY');
      expect(await codeOf(d.store.presignPut(key, { expiresInSec: 60 })), key).toBe('INVALID_BLOB_KEY');
    }
  });

  it('refuses a streamed put past maxBytes and stores nothing', async () => {
    const big = Readable.from([Buffer.alloc(600, 1), Buffer.alloc(600, 2)]);
    expect(await codeOf(d.store.put('too/big', big, { maxBytes: 1000 }))).toBe('PAYLOAD_TOO_LARGE');
    expect(await codeOf(d.store.put('too/big', Buffer.alloc(1001), { maxBytes: 1000 }))).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    expect(await d.store.head('too/big')).toBeNull();
  });

  it('accepts an upload to a presigned PUT URL with plain fetch, then serves a presigned GET', async () => {
    const put = await d.store.presignPut('uploads/photo.png', {
      expiresInSec: 300,
      contentType: 'image/png',
      maxBytes: 1024,
    });
    expect(put.method).toBe('PUT');
    expect(put.headers).toEqual({ 'content-type': 'image/png' });
    const up = await fetch(d.reach(put.url), { method: 'PUT', headers: put.headers, body: 'PNGDATA' });
    expect(up.status).toBe(200);
    await up.arrayBuffer();
    expect(await d.store.head('uploads/photo.png')).toMatchObject({ size: 7, contentType: 'image/png' });

    if (name === 's3') {
      // s3rver does not check query signatures, so only the URL's shape can be tested here: the content
      // type is among the signed headers, so real S3 refuses another one (the disk driver's own refusal is
      // tested below).
      expect(new URL(put.url).searchParams.get('X-Amz-SignedHeaders')).toContain('content-type');
    }

    const url = await d.store.presignGet('uploads/photo.png', { expiresInSec: 300 });
    const res = await fetch(d.reach(url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(await res.text()).toBe('PNGDATA');
  });
});

describe('disk driver: URLs Pier serves itself', () => {
  let d: Awaited<ReturnType<typeof diskDriver>>;
  let store: DiskBlobStore;
  let clock: ManualClock;
  beforeAll(async () => {
    d = await diskDriver();
    store = d.store as DiskBlobStore;
    clock = d.t.clock as ManualClock;
  });
  afterAll(async () => {
    await d?.close();
  });

  const put = (url: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
    fetch(d.reach(url), {
      method: 'PUT',
      headers,
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
  const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

  it('keeps objects under DATA_DIR/blobs', async () => {
    await store.put('where/am-i.txt', Buffer.from('here'));
    expect(fs.readFileSync(path.join(d.t.dataDir, 'blobs', 'objects', 'where', 'am-i.txt'), 'utf8')).toBe(
      'here',
    );
  });

  it('refuses a key that needs a file to be a folder, until the other key is deleted', async () => {
    await store.put('clash/x', Buffer.from('file'));
    expect(await codeOf(store.put('clash/x/y', Buffer.from('nested')))).toBe('BLOB_KEY_CONFLICT');
    await store.put('clash2/x/y', Buffer.from('nested'));
    expect(await codeOf(store.put('clash2/x', Buffer.from('file')))).toBe('BLOB_KEY_CONFLICT');
    await store.delete('clash2/x/y');
    await store.put('clash2/x', Buffer.from('file'));
    expect(await text((await store.get('clash2/x'))!.body)).toBe('file');
    expect(fs.readdirSync(path.join(d.t.dataDir, 'blobs', 'tmp'))).toEqual([]);
  });

  it('refuses expired URLs with URL_EXPIRED', async () => {
    const p = await store.presignPut('exp/a.txt', { expiresInSec: 60 });
    await store.put('exp/b.txt', Buffer.from('b'));
    const g = await store.presignGet('exp/b.txt', { expiresInSec: 60 });
    clock.advance(61_000);
    const res = await put(p.url, 'a');
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe('URL_EXPIRED');
    const got = await fetch(d.reach(g));
    expect(got.status).toBe(403);
    expect(await errorCode(got)).toBe('URL_EXPIRED');
    expect(await store.head('exp/a.txt')).toBeNull();
  });

  it('refuses tampered URLs with SIGNATURE_INVALID', async () => {
    const p = await store.presignPut('sig/a.txt', {
      expiresInSec: 60,
      contentType: 'text/plain',
      maxBytes: 10,
    });
    const u = new URL(p.url);
    const variants = [
      p.url.replace('/sig/a.txt', '/sig/b.txt'),
      p.url.replace(/exp=\d+/, `exp=${Number(u.searchParams.get('exp')) + 3600}`),
      p.url.replace('max=10', 'max=100000'),
      p.url.replace(/ct=[^&]+/, 'ct=text%2Fhtml'),
      p.url.replace(/&sig=[^&]+/, ''),
      p.url.replace(/sig=[^&]+/, 'sig=AAAA'),
    ];
    for (const v of variants) {
      const res = await put(v, 'x', { 'content-type': v.includes('html') ? 'text/html' : 'text/plain' });
      expect(res.status, v).toBe(403);
      expect(await errorCode(res), v).toBe('SIGNATURE_INVALID');
    }
    // A GET URL is not a PUT URL.
    await store.put('sig/g.txt', Buffer.from('g'));
    const g = await store.presignGet('sig/g.txt', { expiresInSec: 60 });
    expect((await put(g, 'overwrite')).status).toBe(403);
    expect((await fetch(d.reach(p.url))).status).toBe(403);
    expect(await store.head('sig/a.txt')).toBeNull();
  });

  it('refuses a content type other than the signed one', async () => {
    const p = await store.presignPut('ct/a.txt', { expiresInSec: 60, contentType: 'text/plain' });
    const res = await put(p.url, '<script>', { 'content-type': 'text/html' });
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe('SIGNATURE_INVALID');
  });

  it('answers 413 to oversize uploads and leaves no partial object or temp file', async () => {
    const p = await store.presignPut('big/a.bin', { expiresInSec: 60, maxBytes: 1000 });
    const declared = await put(p.url, Buffer.alloc(1001));
    expect(declared.status).toBe(413);
    expect(await errorCode(declared)).toBe('PAYLOAD_TOO_LARGE');
    // Without a content-length the limit is enforced while streaming.
    const streamed = await d.t.app.inject({
      method: 'PUT',
      url: p.url.replace('http://pier.test', ''),
      payload: Readable.from([Buffer.alloc(700), Buffer.alloc(700)]),
    });
    expect(streamed.statusCode).toBe(413);
    expect(await store.head('big/a.bin')).toBeNull();
    expect(fs.readdirSync(path.join(d.t.dataDir, 'blobs', 'tmp'))).toEqual([]);
    const ok = await put(p.url, Buffer.alloc(1000));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ key: 'big/a.bin', size: 1000, contentType: null });
  });

  it('streams any content type, including JSON, untouched', async () => {
    const p = await store.presignPut('raw/data.json', { expiresInSec: 60 });
    const body = '{"not": "parsed"'; // invalid JSON must not trip Fastify's JSON parser
    const res = await put(p.url, body, { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    expect(await text((await store.get('raw/data.json'))!.body)).toBe(body);
  });

  it('serves byte ranges, answers 416 outside the object and 404 for a missing one', async () => {
    await store.put('video/clip.mp4', Buffer.from('abcdefghij'), { contentType: 'video/mp4' });
    const url = d.reach(await store.presignGet('video/clip.mp4', { expiresInSec: 60 }));
    const part = await fetch(url, { headers: { range: 'bytes=2-4' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 2-4/10');
    expect(await part.text()).toBe('cde');
    const tail = await fetch(url, { headers: { range: 'bytes=-3' } });
    expect(await tail.text()).toBe('hij');
    const whole = await fetch(url);
    expect(whole.headers.get('content-length')).toBe('10');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bad = await fetch(url, { headers: { range: 'bytes=20-' } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get('content-range')).toBe('bytes */10');
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('10');

    const missing = await fetch(d.reach(await store.presignGet('video/none.mp4', { expiresInSec: 60 })));
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe('BLOB_NOT_FOUND');
  });

  it('refuses escaping paths in the URL', async () => {
    for (const url of [
      '/blobs/a/..%2f..%2fsecret.key',
      '/blobs/a%2f..%2f..%2fsecret.key',
      '/blobs/%2fetc%2fpasswd',
    ]) {
      const res = await d.t.app.inject({ method: 'GET', url: `${url}?exp=1&sig=x` });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.code).toBe('INVALID_BLOB_KEY');
    }
    // Dot segments the router resolves itself never reach the handler.
    const dots = await d.t.app.inject({
      method: 'GET',
      url: '/blobs/a/%2e%2e/%2e%2e/secret.key?exp=1&sig=x',
    });
    expect(dots.statusCode).toBe(404);
  });

  it('sweeps stale partial uploads', async () => {
    const tmp = path.join(d.t.dataDir, 'blobs', 'tmp');
    fs.mkdirSync(tmp, { recursive: true });
    fs.writeFileSync(path.join(tmp, 'stale.part'), 'x');
    const old = new Date(clock.now().getTime() - 2 * 3600_000);
    fs.utimesSync(path.join(tmp, 'stale.part'), old, old);
    fs.writeFileSync(path.join(tmp, 'fresh.part'), 'x');
    fs.utimesSync(path.join(tmp, 'fresh.part'), clock.now(), clock.now());
    expect(await store.sweepTemp(3600_000)).toBe(1);
    expect(fs.readdirSync(tmp)).toEqual(['fresh.part']);
  });

  it('takes one upload per single-use URL; plain URLs stay reusable; expired claims are swept', async () => {
    const once = await store.presignPut('once/a.txt', { expiresInSec: 60, singleUse: true });
    expect(once.url).toContain('once=1');
    expect((await put(once.url, 'first')).status).toBe(200);
    const second = await put(once.url, 'second');
    expect([second.status, await errorCode(second)]).toEqual([409, 'UPLOAD_URL_USED']);
    expect(await text((await store.get('once/a.txt'))!.body)).toBe('first');
    // Dropping the flag breaks the signature instead of lifting the limit.
    const stripped = once.url.replace('&once=1', '').replace('once=1&', '');
    expect(await errorCode(await put(stripped, 'third'))).toBe('SIGNATURE_INVALID');
    // Concurrent PUTs to one URL: exactly one stores its body.
    const race = await store.presignPut('once/race.txt', { expiresInSec: 60, singleUse: true });
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((b) => put(race.url, b.repeat(50_000))));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    const winner = answers.findIndex((r) => r.status === 200);
    expect(await text((await store.get('once/race.txt'))!.body)).toBe('abcd'[winner]!.repeat(50_000));
    const many = await store.presignPut('many/a.txt', { expiresInSec: 60 });
    expect((await put(many.url, '1')).status).toBe(200);
    expect((await put(many.url, '2')).status).toBe(200);
    const used = path.join(d.t.dataDir, 'blobs', 'used');
    expect(fs.readdirSync(used)).toHaveLength(2);
    clock.advance(61_000);
    await store.sweepTemp(3600_000);
    expect(fs.readdirSync(used)).toEqual([]);
  });
});
