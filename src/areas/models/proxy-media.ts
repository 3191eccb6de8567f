import { ApiError, errors } from '../../core/errors.ts';
import type { OutboundAllow } from '../../core/net/outbound-allow.ts';
import { safeFetch } from '../../core/net/safe-fetch.ts';

// Images (and audio) a caller puts in a message. Remote images are fetched here, through the SSRF guard,
// and handed to the provider as bytes: the AI SDK would otherwise download a URL itself for providers that
// cannot take one, with no guard at all.

/** Largest image or audio clip accepted, decoded (OpenAI's own limit per image). */
export const MEDIA_MAX_BYTES = 20 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 15_000;
/** The chat and responses routes' body limit: images as data URLs make bodies far larger than other calls. */
export const PROXY_BODY_LIMIT = 4 * MEDIA_MAX_BYTES;

export type Media = { data: Uint8Array; mediaType: string };

const DATA_URL = /^data:([a-z]+\/[A-Za-z0-9.+-]+)(?:;[^,;]*?)*;base64,(.*)$/s;

function decodeBase64(b64: string, where: string): Uint8Array {
  // base64 is 4/3 of the bytes: refuse before decoding anything too big.
  if (b64.length > Math.ceil(MEDIA_MAX_BYTES / 3) * 4 + 4) throw tooLarge(where);
  if (!/^[A-Za-z0-9+/=\s_-]*$/.test(b64)) throw errors.validation(`${where}: not valid base64.`);
  const buf = Buffer.from(b64, 'base64');
  if (buf.length === 0) throw errors.validation(`${where}: empty.`);
  if (buf.length > MEDIA_MAX_BYTES) throw tooLarge(where);
  return buf;
}

const tooLarge = (where: string) =>
  errors.tooLarge(
    `${where}: larger than the ${MEDIA_MAX_BYTES / 1024 / 1024} MiB allowed per image or audio clip.`,
  );

/** An `image_url` part's image: a data: URL decoded, an http(s) URL fetched through the SSRF guard. */
export async function loadImage(url: string, where: string, allow: OutboundAllow): Promise<Media> {
  if (url.startsWith('data:')) {
    const m = DATA_URL.exec(url);
    if (!m) throw errors.validation(`${where}: a data URL must be data:image/<type>;base64,<data>.`);
    const mediaType = m[1]!.toLowerCase();
    if (!mediaType.startsWith('image/')) throw errors.validation(`${where}: '${mediaType}' is not an image.`);
    return { data: decodeBase64(m[2]!, where), mediaType };
  }
  if (!/^https?:\/\//i.test(url))
    throw errors.validation(`${where}: an image URL is data:, http: or https:.`);
  let res: Awaited<ReturnType<typeof safeFetch>>;
  try {
    res = await safeFetch(url, {
      outboundAllow: allow,
      maxBytes: MEDIA_MAX_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS,
      headers: { accept: 'image/*' },
    });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'RESPONSE_TOO_LARGE') throw tooLarge(where);
    if (err instanceof ApiError && err.code === 'URL_NOT_ALLOWED')
      throw new ApiError('URL_NOT_ALLOWED', err.status, `${where}: ${err.message}`);
    // An image that cannot be fetched is the request's problem (as OpenAI answers it), not a gateway error.
    if (err instanceof ApiError) throw errors.validation(`${where}: ${err.message}`);
    throw err;
  }
  if (!res.ok) throw errors.validation(`${where}: fetching the image answered HTTP ${res.status}.`);
  const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (!mediaType.startsWith('image/'))
    throw errors.validation(`${where}: the URL answered '${mediaType || 'no content type'}', not an image.`);
  if (res.body.length === 0) throw errors.validation(`${where}: the URL answered an empty body.`);
  return { data: res.body, mediaType };
}

/** An `input_audio` part's clip. */
export function loadAudio(data: string, format: 'wav' | 'mp3', where: string): Media {
  return { data: decodeBase64(data, where), mediaType: format === 'wav' ? 'audio/wav' : 'audio/mpeg' };
}
