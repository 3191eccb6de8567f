import { Worker } from 'node:worker_threads';
import zlib from 'node:zlib';
import sharp, { type Sharp } from 'sharp';

// HEIC/HEIF input (iPhone photos). sharp's prebuilt libvips has libheif with the AV1 codec only, so HEVC-coded
// HEIC is decoded by libheif compiled to WebAssembly (`heic-decode`) in a worker thread, and the RGBA pixels
// go on to sharp as raw input. libheif applies the file's rotation and mirror boxes (`irot`/`imir`, where
// HEIF keeps orientation; an EXIF orientation tag inside a HEIF is informational and ignored, as libheif and
// Apple do). The picture's size is read from its `ispe` boxes before anything is decoded, so a
// decompression bomb is refused without the decoder allocating it. Decision 138.

export const HEIF_TYPES = new Set(['image/heic', 'image/heif', 'image/heic-sequence', 'image/heif-sequence']);

/** Larger than any real photo's metadata; `ispe` lives in the `meta` box near the start of the file. */
const META_SCAN_BYTES = 1 << 20;
const CONTAINERS = new Set(['meta', 'iprp', 'ipco']);

/**
 * The largest picture size any `ispe` (image spatial extent) property declares, or null when there is none.
 * A grid image declares its full size next to its tiles' own, so the largest is the one decoding allocates.
 */
export function heifExtent(bytes: Uint8Array): { width: number; height: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, META_SCAN_BYTES));
  let best: { width: number; height: number } | null = null;
  const walk = (start: number, end: number) => {
    let at = start;
    while (at + 8 <= end) {
      let size = view.getUint32(at);
      const type = String.fromCharCode(
        view.getUint8(at + 4),
        view.getUint8(at + 5),
        view.getUint8(at + 6),
        view.getUint8(at + 7),
      );
      let header = 8;
      if (size === 1) {
        if (at + 16 > end) return;
        size = Number(view.getBigUint64(at + 8));
        header = 16;
      } else if (size === 0) size = end - at;
      if (size < header) return;
      const boxEnd = Math.min(end, at + size);
      // `meta` is a full box (4 bytes of version and flags before its children).
      if (CONTAINERS.has(type)) walk(at + header + (type === 'meta' ? 4 : 0), boxEnd);
      if (type === 'ispe' && at + header + 12 <= boxEnd) {
        const width = view.getUint32(at + header + 4);
        const height = view.getUint32(at + header + 8);
        if (!best || width * height > best.width * best.height) best = { width, height };
      }
      at += size;
    }
  };
  walk(0, view.byteLength);
  return best;
}

/**
 * The ICC profile of a `colr` box (`prof`/`rICC`), or null. iPhones write Display P3 here; without it the
 * decoded numbers would be read as sRGB and saturated colours would come out dull.
 */
export function heifIcc(bytes: Uint8Array): Buffer | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, META_SCAN_BYTES));
  let found: Buffer | null = null;
  const walk = (start: number, end: number) => {
    for (let at = start; at + 8 <= end && !found; ) {
      const size = buf.readUInt32BE(at);
      const type = buf.toString('latin1', at + 4, at + 8);
      if (size < 8 || at + size > end) return;
      if (CONTAINERS.has(type)) walk(at + 8 + (type === 'meta' ? 4 : 0), at + size);
      if (type === 'colr' && size > 12) {
        const kind = buf.toString('latin1', at + 8, at + 12);
        if (kind === 'prof' || kind === 'rICC') found = Buffer.from(buf.subarray(at + 12, at + size));
      }
      at += size;
    }
  };
  walk(0, buf.length);
  return found;
}

/**
 * Raw RGB(A) pixels that are in the given ICC profile's space, as a sharp pipeline that knows it (sharp has
 * no way to state a raw input's profile): an uncompressed PNG with the profile in an `iCCP` chunk, which
 * sharp reads like any tagged image and converts to sRGB on output.
 */
async function tagged(img: Sharp, icc: Buffer): Promise<Sharp> {
  const png = await img.png({ compressionLevel: 0, adaptiveFiltering: false }).toBuffer();
  const data = Buffer.concat([Buffer.from('icc\0\0', 'latin1'), zlib.deflateSync(icc)]);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length);
  head.write('iCCP', 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])));
  // Right after IHDR (8-byte signature, then IHDR's 25 bytes), where PNG wants colour information.
  const withIcc = Buffer.concat([png.subarray(0, 33), head, data, crc, png.subarray(33)]);
  return sharp(withIcc, { limitInputPixels: false });
}

export type RawImage = { width: number; height: number; alpha: boolean; data: Uint8Array };

type Pending = { resolve: (r: RawImage) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

/** A decode taking longer than this is a stuck or hostile file: its thread is ended. */
const DECODE_TIMEOUT_MS = 60_000;
/** An idle thread is ended so its WASM memory (which only grows) is given back. */
const IDLE_MS = 30_000;

let worker: Worker | null = null;
let idle: NodeJS.Timeout | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function thread(): Worker {
  if (idle) clearTimeout(idle);
  idle = null;
  if (worker) return worker;
  const w = new Worker(new URL('./heic-worker.ts', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: 256 },
  });
  w.unref();
  w.on('message', (m: { id: number; error?: string } & Partial<RawImage>) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.error !== undefined || !m.data) p.reject(new Error(`HEIC decode failed: ${m.error}`));
    else p.resolve({ width: m.width!, height: m.height!, alpha: !!m.alpha, data: m.data });
    if (pending.size === 0 && worker === w) idle = setTimeout(() => stop(w), IDLE_MS).unref();
  });
  const fail = (err: Error) => {
    if (worker === w) worker = null;
    for (const [id, p] of pending) {
      clearTimeout(p.timer);
      pending.delete(id);
      p.reject(err);
    }
  };
  w.on('error', fail);
  w.on('exit', () => fail(new Error('The HEIC decoding thread stopped.')));
  worker = w;
  return w;
}

function stop(w: Worker): void {
  if (worker === w) worker = null;
  void w.terminate();
}

/** Decodes a HEIC/HEIF picture (its primary image, transformations applied) to RGBA off the event loop. */
export function decodeHeic(bytes: Uint8Array): Promise<RawImage> {
  const w = thread();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error('HEIC decode timed out.'));
      pending.delete(id);
      stop(w);
    }, DECODE_TIMEOUT_MS);
    pending.set(id, { resolve, reject, timer });
    // A copy goes to the thread: the caller's buffer may be a slice of a pooled one.
    w.postMessage({ id, bytes });
  });
}

/** A decoded HEIC as a sharp pipeline (no alpha channel when every pixel is opaque). */
export async function sharpFromHeic(bytes: Uint8Array, maxPixels: number): Promise<Sharp> {
  const size = heifExtent(bytes);
  if (!size) throw new HeicError('undecodable');
  if (size.width * size.height > maxPixels) throw new HeicError('too-large');
  const raw = await decodeHeic(bytes).catch(() => {
    throw new HeicError('undecodable');
  });
  const img = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 4 } });
  const opaque = raw.alpha ? img : img.removeAlpha();
  const icc = heifIcc(bytes);
  return icc ? tagged(opaque, icc) : opaque;
}

export class HeicError extends Error {
  readonly reason: 'too-large' | 'undecodable';
  constructor(reason: 'too-large' | 'undecodable') {
    super(
      reason === 'too-large' ? 'The HEIF image has too many pixels.' : 'The HEIF image could not be decoded.',
    );
    this.reason = reason;
  }
}
