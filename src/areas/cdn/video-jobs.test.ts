import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixtures, fixtures, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';

// Poster frames, thumbnails, animated previews and an HLS rendition, made by the worker with real ffmpeg and
// read back over real HTTP (ffprobe plays the playlist from the listening server, following its segments).

/** 1.2 s of 1280×720 without sound: tall enough for two rungs of the HLS ladder. */
async function hdClip(): Promise<Buffer> {
  const { stdout } = await promisify(execFile)(
    'ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=1280x720:rate=10'],
      ...['-t', '1.2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
      ...['-movflags', 'frag_keyframe+empty_moov', '-f', 'mp4', 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

describe('CDN video renditions', () => {
  let t: TestApp;
  let a: V1Tenant;
  let fx: Fixtures;
  let video: string;
  let image: string;
  let hd: string;

  beforeAll(async () => {
    t = await testApp({
      background: true,
      listen: true,
      env: { V1_RATE_LIMIT_BURST: '1000000', V1_RATE_LIMIT_PER_SEC: '100000' },
    });
    fx = await fixtures();
    a = await seedV1Tenant(t.deps);
    const up = async (filename: string, mimeType: string, bytes: Buffer) =>
      (await uploadAsset(t, a.live, { filename, mimeType, bytes })).confirm!.json().assetId as string;
    video = await up('clip.mp4', 'video/mp4', fx.mp4);
    hd = await up('hd.mp4', 'video/mp4', await hdClip());
    image = await up('still.png', 'image/png', fx.png);
  }, 180_000);
  afterAll(() => t.close());

  const done = async (body: Record<string, unknown>) => {
    const created = await t.v1('POST', '/cdn/video/renditions', a.live, body);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ status: 'queued', progress: 0 });
    const end = Date.now() + 120_000;
    for (;;) {
      const j = (await t.v1('GET', `/cdn/video/renditions/${created.json().id}`, a.live)).json();
      if (j.status === 'completed' || j.status === 'failed') return j;
      if (Date.now() > end) throw new Error(`video job stuck: ${JSON.stringify(j)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const local = (cdnUrl: string) => cdnUrl.replace('http://pier.test', t.url);
  const get = async (cdnUrl: string) => Buffer.from(await (await fetch(local(cdnUrl))).arrayBuffer());

  it('makes a poster frame and a thumbnail at a time offset', async () => {
    const poster = await done({ assetId: video, kind: 'poster', at: 0.5 });
    expect(poster).toMatchObject({
      status: 'completed',
      progress: 100,
      outputAsset: { mimeType: 'image/jpeg' },
    });
    const p = await sharp(await get(poster.outputAsset.cdnUrl)).metadata();
    expect([p.format, p.width, p.height]).toEqual(['jpeg', 160, 120]);
    const thumb = await done({ assetId: video, kind: 'thumbnail', at: 0.2, width: 80 });
    const m = await sharp(await get(thumb.outputAsset.cdnUrl)).metadata();
    expect([m.format, m.width, m.height]).toEqual(['jpeg', 80, 60]);
    // The asset record says what it is and where it came from.
    const asset = (await t.v1('GET', `/cdn/assets/${thumb.outputAsset.assetId}`, a.live)).json();
    expect(asset).toMatchObject({ type: 'image', width: 80, metadata: { sourceAssetId: video } });
  });

  it('makes an animated WebP preview', async () => {
    const j = await done({ assetId: video, kind: 'preview', at: 0, duration: 0.8, width: 96 });
    expect(j.outputAsset.mimeType).toBe('image/webp');
    const m = await sharp(await get(j.outputAsset.cdnUrl), { animated: true }).metadata();
    expect(m.width).toBe(96);
    expect(m.pages).toBeGreaterThanOrEqual(5);
  });

  const probe = async (url: string) => {
    // Asynchronously: the server answering ffprobe runs in this very process.
    const { stdout } = await promisify(execFile)(
      'ffprobe',
      [...['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams'], local(url)],
      { timeout: 120_000 },
    );
    return JSON.parse(stdout) as {
      format: { format_name: string; duration: string };
      streams: { codec_name: string; height?: number; tags?: { variant_bitrate?: string } }[];
    };
  };

  it('makes HLS from a small video: one rendition at its own size under a master, played by ffprobe', async () => {
    const j = await done({ assetId: video, kind: 'hls' });
    expect(j).toMatchObject({
      status: 'completed',
      progress: 100,
      outputAsset: { mimeType: 'application/vnd.apple.mpegurl' },
    });
    const master = (await get(j.outputAsset.cdnUrl)).toString();
    expect(master).toMatch(/^#EXTM3U/);
    expect(master).toMatch(/#EXT-X-STREAM-INF:.*RESOLUTION=160x120/);
    const variant = master.match(/^\.\.\/[0-9a-f-]{36}\/clip-120p\.m3u8$/m)?.[0];
    expect(variant, master).toBeDefined();
    const media = (await get(new URL(variant!, j.outputAsset.cdnUrl).href)).toString();
    expect(media).toMatch(/#EXT-X-ENDLIST/);
    expect(media).toMatch(/^\.\.\/[0-9a-f-]{36}\/seg000\.ts$/m);
    const p = await probe(j.outputAsset.cdnUrl);
    expect(p.format.format_name).toBe('hls');
    expect(Number(p.format.duration)).toBeGreaterThan(0.8);
    expect(p.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
  });

  it('makes an HLS ladder: 360p and 720p of a 720p source under one master playlist, both played', async () => {
    const j = await done({ assetId: hd, kind: 'hls' });
    expect(j.status, j.error).toBe('completed');
    const master = (await get(j.outputAsset.cdnUrl)).toString();
    const inf = [...master.matchAll(/#EXT-X-STREAM-INF:(.*)/g)].map((m) => m[1]!);
    expect(inf).toHaveLength(2);
    expect(inf.map((l) => l.match(/RESOLUTION=(\d+x\d+)/)?.[1])).toEqual(['640x360', '1280x720']);
    const bandwidth = inf.map((l) => Number(l.match(/(?:^|,)BANDWIDTH=(\d+)/)?.[1]));
    expect(bandwidth[0]).toBeLessThan(bandwidth[1]!);
    // ffprobe opens the master and every variant it lists (and their segments).
    const p = await probe(j.outputAsset.cdnUrl);
    expect(p.format.format_name).toBe('hls');
    const heights = p.streams.filter((s) => s.codec_name === 'h264').map((s) => s.height);
    expect(heights.sort((x, y) => x! - y!)).toEqual([360, 720]);
    expect(p.streams.every((s) => Number(s.tags?.variant_bitrate) > 0)).toBe(true);
    // Only renditions no taller than the source: no 1080p from 720p.
    expect(master).not.toMatch(/1080/);
  });

  it('refuses non-video assets, bad bodies and other tenants', async () => {
    const notVideo = await t.v1('POST', '/cdn/video/renditions', a.live, { assetId: image, kind: 'poster' });
    expect([notVideo.statusCode, notVideo.json().error.code]).toEqual([400, 'ASSET_NOT_VIDEO']);
    for (const body of [
      { assetId: video, kind: 'gif' },
      { assetId: video, kind: 'poster', at: -1 },
      { assetId: video, kind: 'preview', duration: 11 },
      { assetId: 'x', kind: 'poster' },
    ]) {
      const r = await t.v1('POST', '/cdn/video/renditions', a.live, body);
      expect([r.statusCode, r.json().error.code], JSON.stringify(body)).toEqual([400, 'VALIDATION_ERROR']);
    }
    const other = await seedV1Tenant(t.deps);
    const foreign = await t.v1('POST', '/cdn/video/renditions', other.live, {
      assetId: video,
      kind: 'poster',
    });
    expect([foreign.statusCode, foreign.json().error.code]).toEqual([404, 'ASSET_NOT_FOUND']);
    const mine = (
      await t.v1('POST', '/cdn/video/renditions', a.live, { assetId: video, kind: 'poster' })
    ).json();
    const peek = await t.v1('GET', `/cdn/video/renditions/${mine.id}`, other.live);
    expect([peek.statusCode, peek.json().error.code]).toEqual([404, 'VIDEO_JOB_NOT_FOUND']);
  });
});
