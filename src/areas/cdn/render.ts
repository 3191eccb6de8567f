import fsp from 'node:fs/promises';
import sharp from 'sharp';
import { ApiError } from '../../core/errors.ts';
import { cdnErrors } from './errors.ts';
import { HEIF_TYPES, HeicError, sharpFromHeic } from './heic.ts';
import type { TransformOptions } from './schema.ts';
import { watermarkFor } from './watermark.ts';

// The sharp side of a transform: no storage, no database, so benchmarks and tests call it directly. The input
// is the image's bytes or the path of a local file (sharp then reads it on its own thread).

/** Source images above this many pixels are refused (a decompression bomb is a 4xx, not an OOM). */
export const MAX_INPUT_PIXELS = 100_000_000;
/** Animations with more frames are refused: each frame is resized, so work grows with the count. */
export const MAX_ANIMATION_FRAMES = 500;
const MAX_SIDE = 4096;

export type Format = 'jpeg' | 'webp' | 'avif' | 'png' | 'gif';
export const CONTENT_TYPES: Record<Format, string> = {
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  avif: 'image/avif',
  png: 'image/png',
  gif: 'image/gif',
};

/** Sources that may hold several frames, and the outputs that keep them (sharp writes AVIF as one frame). */
const ANIMATABLE_IN = new Set(['image/gif', 'image/webp']);
const ANIMATED_OUT = new Set<Format>(['gif', 'webp']);

/** The output format: asked for, chosen by `Accept` for `auto`, or the source's own. */
export function chooseFormat(opts: TransformOptions, source: string, accept: string): Format {
  if (opts.format && opts.format !== 'auto') return opts.format;
  const animatable = ANIMATABLE_IN.has(source);
  if (opts.format === 'auto') {
    // A GIF or WebP may move: AVIF would freeze it, so WebP is preferred for them.
    if (!animatable && /image\/avif/.test(accept)) return 'avif';
    if (/image\/(webp|avif)/.test(accept) && (animatable || /image\/webp/.test(accept))) return 'webp';
    if (source === 'image/gif') return 'gif';
    return source === 'image/png' || animatable ? 'png' : 'jpeg';
  }
  const same = Object.entries(CONTENT_TYPES).find(([, ct]) => ct === source);
  // A HEIC is a photo that browsers other than Safari cannot show: JPEG keeps it a photo everywhere.
  return (same?.[0] as Format | undefined) ?? (HEIF_TYPES.has(source) ? 'jpeg' : 'png');
}

type Rgba = { r: number; g: number; b: number; alpha: number };
function rgba(hex: string): Rgba {
  const n = (i: number) => Number.parseInt(hex.slice(i, i + 2), 16);
  return { r: n(0), g: n(2), b: n(4), alpha: hex.length === 8 ? n(6) / 255 : 1 };
}
const TRANSPARENT: Rgba = { r: 0, g: 0, b: 0, alpha: 0 };
const WHITE: Rgba = { r: 255, g: 255, b: 255, alpha: 1 };

/** How many frames to decode: all of them only when both the source and the output can animate. */
async function framesOf(input: Buffer | string, sourceType: string | undefined, format: Format) {
  if (!sourceType || !ANIMATABLE_IN.has(sourceType) || !ANIMATED_OUT.has(format)) return 1;
  const meta = await sharp(input, { animated: true, limitInputPixels: false }).metadata();
  const pages = meta.pages ?? 1;
  if (pages > MAX_ANIMATION_FRAMES) throw cdnErrors.tooManyFrames(pages, MAX_ANIMATION_FRAMES);
  return pages;
}

/** The source as a sharp pipeline, upright: HEIC through the WASM decoder, everything else read by sharp. */
async function openImage(input: Buffer | string, mimeType: string | undefined, animated: boolean) {
  if (mimeType && HEIF_TYPES.has(mimeType)) {
    const bytes = typeof input === 'string' ? await fsp.readFile(input) : input;
    const heic = await sharpFromHeic(bytes, MAX_INPUT_PIXELS).catch((err: HeicError) => {
      // A HEIF that libheif's WASM build cannot read may be AV1-coded, which sharp reads itself.
      if (err.reason === 'undecodable' && !mimeType.startsWith('image/heic')) return null;
      throw err;
    });
    if (heic) return heic;
  }
  return sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', animated }).rotate();
}

export async function renderImage(
  input: Buffer | string,
  opts: TransformOptions,
  format: Format,
  source: { mimeType?: string; watermark?: Buffer | string } = {},
): Promise<Buffer> {
  try {
    // A watermark is drawn on one picture: a marked animation is its first frame (documented).
    const marked = !!(opts.watermarkText || source.watermark);
    const animated = !marked && (await framesOf(input, source.mimeType, format)) > 1;
    let img = await openImage(input, source.mimeType, animated);
    const dpr = opts.dpr ?? 1;
    const scaled = (n: number | undefined) => (n ? Math.min(MAX_SIDE, Math.round(n * dpr)) : undefined);
    const bg = opts.background ? rgba(opts.background) : undefined;
    if (opts.width || opts.height) {
      // Smart crop scores one picture; sharp has no strategy across frames, so animations crop centred.
      const smart = opts.gravity === 'attention' || opts.gravity === 'entropy';
      img = img.resize({
        width: scaled(opts.width),
        height: scaled(opts.height),
        fit: opts.fit ?? 'cover',
        ...(opts.gravity && !(smart && animated) ? { position: opts.gravity } : {}),
        ...(bg ? { background: bg } : {}),
      });
    }
    if (opts.blur !== undefined) img = img.blur(opts.blur);
    if (opts.sharpen !== undefined) img = img.sharpen({ sigma: opts.sharpen });
    if (opts.grayscale) img = img.grayscale();
    if (opts.pad) {
      const p = Math.min(1000, Math.round(opts.pad * dpr));
      const background = bg ?? (format === 'jpeg' ? WHITE : TRANSPARENT);
      img = img.extend({ top: p, bottom: p, left: p, right: p, background });
    }
    if (bg && format === 'jpeg') img = img.flatten({ background: bg });
    if (marked) {
      // The mark is sized to the finished picture, which is known only once it is rendered.
      const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
      const mark = await watermarkFor(opts, info.width, info.height, source.watermark);
      const raw = { width: info.width, height: info.height, channels: info.channels };
      img = sharp(data, { raw }).composite(mark ? [mark] : []);
    }
    const q = opts.quality;
    img =
      format === 'png'
        ? img.png()
        : format === 'jpeg'
          ? img.jpeg({ quality: q ?? 80, mozjpeg: false })
          : format === 'webp'
            ? img.webp({ quality: q ?? 80 })
            : format === 'gif'
              ? img.gif()
              : img.avif({ quality: q ?? 50, effort: 2 });
    return await img.toBuffer();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (err instanceof HeicError && err.reason === 'too-large')
      throw cdnErrors.imageTooLarge(MAX_INPUT_PIXELS);
    if ((err as NodeJS.ErrnoException)?.code === 'ENOENT') throw cdnErrors.assetNotFound();
    const msg = String((err as Error)?.message ?? err);
    if (/pixel limit/i.test(msg)) throw cdnErrors.imageTooLarge(MAX_INPUT_PIXELS);
    if (/input file is missing/i.test(msg)) throw cdnErrors.assetNotFound();
    throw cdnErrors.imageUndecodable();
  }
}
