import crypto from 'node:crypto';
import { orgsErrors } from './errors.ts';

// Reserved so an app hostname can never shadow Pier's own names.
const RESERVED = new Set([
  'www',
  'api',
  'admin',
  'app',
  'apps',
  'dashboard',
  'pier',
  'cdn',
  'static',
  'mail',
]);

// 3 to 40 characters, a DNS label's alphabet, no hyphen at either end: a slug is an app's host name.
const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{1,38})[a-z0-9]$/;

export function assertSlug(slug: string): void {
  if (!SLUG_RE.test(slug) || slug.includes('--') || RESERVED.has(slug)) throw orgsErrors.invalidSlug(slug);
}

/** A valid slug derived from a display name, with a random suffix when asked for uniqueness. */
export function slugFromName(name: string, suffix = false): string {
  let base = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32)
    .replace(/-+$/, '');
  if (base.length < 3) base = `org-${base}`.replace(/-+$/, '');
  if (RESERVED.has(base)) suffix = true;
  return suffix ? `${base}-${crypto.randomBytes(3).toString('hex')}` : base;
}
