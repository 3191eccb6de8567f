import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import { fileTypeFromBuffer } from 'file-type';
import sharp, { type Sharp } from 'sharp';
import { HEIF_TYPES, sharpFromHeic } from './heic.ts';
import type { AssetStatus, AssetType, MediaInfo } from './tables.ts';

// What an upload really is, from its bytes: the content type is sniffed (file-type) and wins over the
// declaration when they disagree; images get their dimensions (sharp, header only); video and audio are
// probed with ffprobe, and a file that ffprobe cannot read (or that has no audio or video stream) is
// `failed` with the reason. No database, no blob store: tests run it on files alone.

export type Inspection = {
  mimeType: string;
  type: AssetType;
  status: AssetStatus;
  error: string | null;
  width: number | null;
  height: number | null;
  duration: number | null;
  media: MediaInfo | null;
  /** Frames of an animated image; null for stills. */
  frames?: number | null;
  /** A tiny blurred WebP data URL of an image, to show while it loads. */
  placeholder?: string | null;
};

/** How many leading bytes the sniffer reads (file-type needs a few KB; some containers more). */
export const SNIFF_BYTES = 64 * 1024;

export function typeOf(mime: string): AssetType {
  const [top, sub = ''] = mime.split('/');
  if (top === 'image') return 'image';
  if (top === 'video') return 'video';
  if (top === 'audio') return 'audio';
  if (top === 'text' || DOCUMENT_SUBTYPES.some((d) => sub.startsWith(d))) return 'document';
  return 'other';
}

const DOCUMENT_SUBTYPES = [
  'pdf',
  'msword',
  'vnd.openxmlformats-officedocument',
  'vnd.oasis.opendocument',
  'vnd.ms-excel',
  'vnd.ms-powerpoint',
  'rtf',
  'json',
  'epub',
];

function looksLikeSvg(head: Buffer): boolean {
  const text = head
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  return (
    (text.startsWith('<?xml') || text.startsWith('<svg') || text.startsWith('<!')) && /<svg[\s>]/i.test(text)
  );
}

/** The content type the bytes show, or the declaration where bytes cannot tell (plain text formats). */
export async function sniffMime(head: Buffer, declared: string): Promise<string> {
  const found = await fileTypeFromBuffer(head).catch(() => undefined);
  if (found && found.mime !== 'application/xml') return found.mime;
  if (looksLikeSvg(head)) return 'image/svg+xml';
  if (declared === 'image/svg+xml') return found?.mime ?? 'text/plain';
  // Binary media types always carry a signature file-type knows; without one the declaration is false.
  // (video/audio are left to ffprobe, which knows more containers than file-type.)
  if (declared.startsWith('image/')) return 'application/octet-stream';
  return found?.mime ?? declared;
}

/** Sniffs, then measures what the type calls for. `file` is the whole object on local disk. */
export async function inspectFile(file: string, declared: string, ffprobePath: string): Promise<Inspection> {
  const fh = await fsp.open(file, 'r');
  let head: Buffer;
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(buf, 0, SNIFF_BYTES, 0);
    head = buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
  const mimeType = await sniffMime(head, declared);
  const base: Inspection = {
    mimeType,
    type: typeOf(mimeType),
    status: 'ready',
    error: null,
    width: null,
    height: null,
    duration: null,
    media: null,
  };
  if (base.type === 'image') return { ...base, ...(await imageSize(file, mimeType)) };
  if (base.type === 'video' || base.type === 'audio') return probeInto(base, file, ffprobePath);
  return base;
}

/** Past this many pixels the truncation check is skipped: such an image is never transformed anyway. */
const CHECK_PIXELS = 100_000_000;

async function imageSize(file: string, mimeType: string): Promise<Partial<Inspection>> {
  try {
    // Header only: metadata() does not decode pixels, so a decompression bomb costs nothing here.
    const m = await sharp(file, { limitInputPixels: false }).metadata();
    // The header of a cut-off JPEG reads fine; only decoding finds the missing end. An eighth-size decode
    // (libjpeg's shrink-on-load) reads every scan for a few ms, so a truncated upload fails at confirm
    // instead of serving a half-grey picture.
    if (mimeType === 'image/jpeg' && (m.width ?? 0) * (m.height ?? 0) <= CHECK_PIXELS) {
      await sharp(file, { failOn: 'truncated', limitInputPixels: CHECK_PIXELS }).resize(8).toBuffer();
    }
    const small = (m.width ?? 0) * (m.height ?? 0) <= CHECK_PIXELS;
    // sharp reads a HEIC's header but not its HEVC pictures: the WASM decoder (a thread) decodes it once,
    // which both proves it whole and gives the placeholder.
    const heic = HEIF_TYPES.has(mimeType) && small ? await heicPipeline(file) : undefined;
    return {
      width: m.autoOrient?.width ?? m.width ?? null,
      height: m.autoOrient?.height ?? m.height ?? null,
      frames: (m.pages ?? 1) > 1 && /gif|webp/.test(mimeType) ? m.pages! : null,
      placeholder: small
        ? await placeholderOf(
            // Only truncation fails (not libpng's warnings about a profile, which every viewer ignores).
            heic ?? sharp(file, { limitInputPixels: CHECK_PIXELS, failOn: 'truncated' }),
            STRICT.test(mimeType),
          )
        : null,
    };
  } catch (err) {
    return { status: 'failed', error: `The image could not be decoded: ${firstLine(err)}` };
  }
}

async function heicPipeline(file: string): Promise<Sharp> {
  // An AVIF-coded HEIF is sharp's own: only what sharp cannot decode goes to the WASM decoder.
  const own = await sharp(file, { failOn: 'error' })
    .resize(8)
    .toBuffer()
    .then(() => true)
    .catch(() => false);
  if (own) return sharp(file, { limitInputPixels: CHECK_PIXELS });
  return sharpFromHeic(await fsp.readFile(file), CHECK_PIXELS);
}

/** Past this, the placeholder is no longer "tiny"; 16 px at low quality stays near 200 bytes. */
const PLACEHOLDER_SIDE = 16;

/**
 * Raster formats whose full decode must succeed: the placeholder decodes every pixel anyway, so a cut-off
 * PNG (whose header reads fine, like a JPEG's) fails at confirm instead of serving a broken picture.
 * Others (SVG) keep the old leniency: no placeholder, still ready.
 */
const STRICT = /^image\/(png|webp|gif|avif|tiff|bmp)$/;

/** An LQIP: the image shrunk to 16 px (aspect kept), slightly blurred, as a WebP data URL. */
async function placeholderOf(source: Sharp, strict: boolean): Promise<string | null> {
  try {
    const body = await source
      .rotate()
      .resize(PLACEHOLDER_SIDE, PLACEHOLDER_SIDE, { fit: 'inside' })
      .blur(0.6)
      .webp({ quality: 40, alphaQuality: 40 })
      .toBuffer();
    return `data:image/webp;base64,${body.toString('base64')}`;
  } catch (err) {
    if (strict) throw err;
    return null;
  }
}

async function probeInto(base: Inspection, file: string, ffprobePath: string): Promise<Inspection> {
  const probed = await probeMedia(file, ffprobePath);
  if ('error' in probed) return { ...base, status: 'failed', error: probed.error };
  const { info, width, height } = probed;
  let { mimeType, type } = base;
  // An mp4/webm container holding only sound is audio, whatever its brand says.
  if (type === 'video' && !info.hasVideo && info.hasAudio) {
    type = 'audio';
    mimeType = mimeType.replace(/^video\//, 'audio/');
  }
  if (!info.hasVideo && !info.hasAudio) {
    return {
      ...base,
      status: 'failed',
      error: 'The file has no decodable audio or video stream.',
      media: info,
    };
  }
  return { ...base, mimeType, type, width, height, duration: info.duration ?? null, media: info };
}

type FfprobeOut = {
  streams?: {
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    duration?: string;
    disposition?: { attached_pic?: number };
  }[];
  format?: { duration?: string; format_name?: string };
};

/** ffprobe's view of a media file: streams, codecs, duration and picture size, or why it failed. */
export async function probeMedia(
  file: string,
  ffprobePath: string,
): Promise<{ info: MediaInfo; width: number | null; height: number | null } | { error: string }> {
  const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file];
  const out = await new Promise<{ stdout: string; stderr: string; failed: boolean }>((resolve) => {
    execFile(ffprobePath, args, { timeout: 60_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ stdout, stderr, failed: !!err }),
    );
  });
  if (out.failed) {
    return {
      error: `The media could not be decoded: ${out.stderr.trim().split('\n')[0] || 'ffprobe failed'}`,
    };
  }
  let parsed: FfprobeOut;
  try {
    parsed = JSON.parse(out.stdout) as FfprobeOut;
  } catch {
    return { error: 'The media could not be decoded: ffprobe gave no readable answer.' };
  }
  const streams = parsed.streams ?? [];
  const formatName = parsed.format?.format_name ?? '';
  const pictures = streams.filter((s) => s.codec_type === 'video');
  const moving = pictures.filter((s) => s.disposition?.attached_pic !== 1);
  // Still-image "containers" (image2, png_pipe...) decode as one frame of video: not a video.
  const stillImage = moving.length > 0 && /(^|,)(image2|\w+_pipe)(,|$)/.test(formatName);
  const video = stillImage ? undefined : moving[0];
  const audio = streams.find((s) => s.codec_type === 'audio');
  const d = Number(parsed.format?.duration ?? video?.duration ?? audio?.duration);
  const info: MediaInfo = {
    duration: Number.isFinite(d) ? Math.round(d * 1000) / 1000 : undefined,
    videoCodec: video?.codec_name,
    audioCodec: audio?.codec_name,
    hasVideo: !!video,
    hasAudio: !!audio,
    stillImage: stillImage || (pictures.length > 0 && moving.length === 0) || undefined,
  };
  return { info, width: video?.width ?? null, height: video?.height ?? null };
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0];
}
