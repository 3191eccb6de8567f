import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import type { TestApp } from './harness.ts';

// CDN test helpers: media fixtures made once per process with real sharp and ffmpeg (short, small), and an
// upload helper that does what a client does — ask for a URL, PUT the bytes to it, confirm.

export type Fixtures = {
  png: Buffer;
  jpeg: Buffer;
  mp4: Buffer;
  mp3: Buffer;
  svg: Buffer;
  /** A 1-bit 12000×12000 PNG: a few KB on disk, 144 megapixels decoded. */
  bomb: Buffer;
  dir: string;
};

let made: Promise<Fixtures> | undefined;

export function fixtures(): Promise<Fixtures> {
  made ??= makeFixtures();
  return made;
}

async function makeFixtures(): Promise<Fixtures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-cdn-fx-'));
  const raw = {
    create: { width: 64, height: 48, channels: 3 as const, background: { r: 200, g: 40, b: 90 } },
  };
  const png = await sharp(raw).png().toBuffer();
  const jpeg = await sharp(raw).jpeg().toBuffer();
  const mp4 = path.join(dir, 'clip.mp4');
  const ff = ['-hide_banner', '-loglevel', 'error', '-y'];
  execFileSync('ffmpeg', [
    ...ff,
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=160x120:rate=10',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=22050',
    '-t',
    '1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    mp4,
  ]);
  const mp3 = path.join(dir, 'tone.mp3');
  execFileSync('ffmpeg', [
    ...ff,
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=22050',
    '-t',
    '1',
    mp3,
  ]);
  const svg = Buffer.from(
    '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>',
  );
  return {
    png,
    jpeg,
    mp4: fs.readFileSync(mp4),
    mp3: fs.readFileSync(mp3),
    svg,
    bomb: bombPng(12_000, 12_000),
    dir,
  };
}

/** A valid grayscale 1-bit PNG of the given size, all black: tiny compressed, huge decoded. */
export function bombPng(width: number, height: number): Buffer {
  const row = Buffer.alloc(1 + Math.ceil(width / 8)); // filter byte 0, then zero bits
  const rows = Buffer.alloc(row.length * height);
  const idat = zlib.deflateSync(rows, { level: 9 });
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** PUTs bytes to an upload URL: Pier's own (disk driver, through inject) or the object store's (fetch). */
export async function putTo(
  t: TestApp,
  url: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<number> {
  const base = t.deps.config.publicUrl;
  if (url.startsWith(base)) {
    const res = await t.app.inject({ method: 'PUT', url: url.slice(base.length), headers, payload: body });
    return res.statusCode;
  }
  const res = await fetch(url, { method: 'PUT', headers, body: new Uint8Array(body) });
  await res.arrayBuffer();
  return res.status;
}

/** Upload request + PUT (+ confirm unless `confirm: false`); returns the responses' JSON. */
export async function uploadAsset(
  t: TestApp,
  key: string,
  o: { filename: string; mimeType: string; bytes: Buffer; size?: number; folder?: string; confirm?: boolean },
) {
  const req = await t.v1('POST', '/cdn/upload', key, {
    filename: o.filename,
    mimeType: o.mimeType,
    size: o.size ?? o.bytes.length,
    ...(o.folder !== undefined ? { folder: o.folder } : {}),
  });
  if (req.statusCode !== 200) throw new Error(`upload request failed: ${req.statusCode} ${req.body}`);
  const up = req.json();
  const putStatus = await putTo(t, up.uploadUrl, up.uploadHeaders, o.bytes);
  if (o.confirm === false) return { up, putStatus, confirm: undefined };
  const confirm = await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, key, {});
  return { up, putStatus, confirm };
}

/** A GET of a /cdn URL through the app. */
export function getCdn(t: TestApp, url: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url: url.slice(t.deps.config.publicUrl.length), headers });
}
