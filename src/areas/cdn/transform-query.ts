import { blobErrors } from '../../core/blobs/errors.ts';
import type { Keyring } from '../../core/crypto.ts';
import { type TransformRequestOptions, transformRequestOptions } from './schema.ts';

// A transform URL's query: short, stable parameter names in one canonical order. Pier signs the canonical
// query of the options it was given (`sig`), and the cache keys a variant by the same string, so two URLs
// asking for the same thing in another order share a rendition.

const NUMBERS = new Set([
  'width',
  'height',
  'quality',
  'blur',
  'dpr',
  'sharpen',
  'pad',
  'watermarkOpacity',
  'watermarkScale',
]);

// The order here is the canonical order.
export const PARAMS = [
  ['width', 'w'],
  ['height', 'h'],
  ['fit', 'fit'],
  ['format', 'f'],
  ['quality', 'q'],
  ['blur', 'blur'],
  ['grayscale', 'g'],
  ['gravity', 'gr'],
  ['dpr', 'dpr'],
  ['sharpen', 'sh'],
  ['background', 'bg'],
  ['pad', 'pad'],
  ['watermarkText', 'wm'],
  ['watermarkAsset', 'wmi'],
  ['watermarkPosition', 'wmp'],
  ['watermarkOpacity', 'wmo'],
  ['watermarkScale', 'wms'],
  ['preset', 'p'],
] as const;
const KNOWN = new Set<string>(PARAMS.map(([, s]) => s));

export function canonicalQuery(opts: TransformRequestOptions): string {
  const q = new URLSearchParams();
  for (const [name, short] of PARAMS) {
    const v = opts[name];
    if (v === undefined || v === false) continue;
    // Colours in either case are one variant.
    q.set(short, v === true ? '1' : name === 'background' ? String(v).toLowerCase() : String(v));
  }
  return q.toString();
}

export function signTransform(keyring: Keyring, assetId: string, query: string): string {
  return keyring.sign(`cdn-transform\n${assetId}\n${query}`);
}

/**
 * The options a query names (short names), or null when a parameter is unknown or a value is out of range.
 * `allow` lists further parameters the caller handles itself (a signature, a key id, a preset).
 */
export function optionsFromQuery(
  raw: Record<string, string>,
  allow: string[] = [],
): TransformRequestOptions | null {
  const opts: Record<string, unknown> = {};
  for (const [name, short] of PARAMS) {
    const v = raw[short];
    if (v === undefined) continue;
    opts[name] = name === 'grayscale' ? v === '1' : NUMBERS.has(name) ? Number(v) : v;
  }
  if (Object.keys(raw).some((k) => !KNOWN.has(k) && !allow.includes(k))) return null;
  const parsed = transformRequestOptions.safeParse(opts);
  return parsed.success ? parsed.data : null;
}

/** Checks a Pier-signed transform URL and reads its options back; a tampered URL is 403 SIGNATURE_INVALID. */
export function verifyTransformQuery(keyring: Keyring, assetId: string, raw: Record<string, string>) {
  const { sig, ...rest } = raw;
  const opts = optionsFromQuery(rest);
  if (!sig || !opts) throw blobErrors.signatureInvalid();
  if (!keyring.verify(`cdn-transform\n${assetId}\n${canonicalQuery(opts)}`, sig)) {
    throw blobErrors.signatureInvalid();
  }
  return opts;
}
