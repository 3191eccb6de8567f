import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../../core/blobs/blob-store.ts';

// ffprobe, ffmpeg and sharp want a seekable file (an mp4's index may sit at its end), so media checks and
// merges work on a temporary local copy of the object — on the disk driver as on S3 — removed afterwards.

export async function scratchDir(prefix: string): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), `pier-cdn-${prefix}-`));
}

/** Copies a blob into `dir`; returns the file's path, or null when the object does not exist. */
export async function copyBlobTo(blobs: BlobStore, key: string, dir: string): Promise<string | null> {
  const obj = await blobs.get(key);
  if (!obj) return null;
  const file = path.join(dir, crypto.randomUUID());
  await pipeline(obj.body, fs.createWriteStream(file));
  return file;
}

export async function withBlobCopy<T>(
  blobs: BlobStore,
  key: string,
  fn: (file: string | null) => Promise<T>,
): Promise<T> {
  const dir = await scratchDir('copy');
  try {
    return await fn(await copyBlobTo(blobs, key, dir));
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
