// Schema-guided extraction without a model (web data): collects candidate facts from a page's JSON-LD,
// microdata, Open Graph and meta tags, then label/value patterns in the text (dt/dd, th/td, "Label: value"),
// and fills each property of the JSON schema from the best-named candidate, coerced to its type. Fields it
// cannot find are left out. Regular expressions, not a DOM: good on typical pages, fooled by odd markup.

export const HEURISTIC_EXTRACT_MODEL = 'pier-local/heuristic-extract-v1';

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  description?: string;
  [k: string]: unknown;
};

type Candidate = { key: string; value: unknown; rank: number };

const norm = (k: string) => k.toLowerCase().replace(/[^a-z0-9]/g, '');

// Other names a field commonly goes by on pages (normalised).
const SYNONYMS: Record<string, string[]> = {
  title: ['name', 'headline', 'ogtitle', 'twittertitle'],
  name: ['title', 'headline', 'ogtitle'],
  description: ['ogdescription', 'twitterdescription', 'summary', 'abstract'],
  image: ['ogimage', 'twitterimage', 'thumbnailurl', 'imageurl'],
  price: ['offersprice', 'productpriceamount', 'ogpriceamount', 'lowprice'],
  currency: ['offerspricecurrency', 'pricecurrency', 'productpricecurrency'],
  author: ['authorname', 'creator', 'byline'],
  url: ['ogurl', 'canonical'],
  date: ['datepublished', 'publishedtime', 'articlepublishedtime'],
  brand: ['brandname'],
  sku: ['productid', 'mpn'],
  email: ['mail', 'emailaddress'],
  phone: ['telephone', 'tel', 'phonenumber'],
  sitename: ['ogsitename', 'publisher', 'publishername'],
};

const decode = (s: string) =>
  s
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)));

const stripTags = (s: string) =>
  decode(s.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, ' ').replace(/<[^>]+>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  return m ? decode(m[2] ?? m[3] ?? m[4] ?? '') : undefined;
}

function flattenLd(value: unknown, prefix: string, out: Candidate[], rank: number): void {
  if (Array.isArray(value)) {
    for (const v of value) flattenLd(v, prefix, out, rank);
    return;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '@context') continue;
      if (k === '@graph') flattenLd(v, prefix, out, rank);
      else flattenLd(v, prefix ? `${prefix}.${k}` : k, out, rank);
    }
    return;
  }
  if (prefix && value !== null && value !== undefined) {
    out.push({ key: prefix, value, rank });
    const last = prefix.split('.').pop()!;
    if (last !== prefix) out.push({ key: last, value, rank: rank + 1 });
  }
}

export function collectCandidates(html: string): Candidate[] {
  const out: Candidate[] = [];
  for (const m of html.matchAll(
    /<script[^>]*type\s*=\s*["']application\/ld\+json["'][^>]*>([\s\S]*?)<\/script>/gi,
  )) {
    try {
      flattenLd(JSON.parse(m[1]!), '', out, 0);
    } catch {}
  }
  for (const m of html.matchAll(
    /<([a-z0-9]+)\b([^>]*\bitemprop\s*=[^>]*)>([\s\S]*?)<\/\1>|<(meta|link|img)\b([^>]*\bitemprop\s*=[^>]*)>/gi,
  )) {
    const tag = m[2] ?? m[5] ?? '';
    const key = attr(tag, 'itemprop');
    const value = attr(tag, 'content') ?? attr(tag, 'href') ?? attr(tag, 'src') ?? stripTags(m[3] ?? '');
    if (key && value) out.push({ key, value, rank: 1 });
  }
  for (const m of html.matchAll(/<meta\b[^>]*>/gi)) {
    const key = attr(m[0], 'property') ?? attr(m[0], 'name');
    const value = attr(m[0], 'content');
    if (key && value) out.push({ key, value, rank: key.startsWith('og:') ? 2 : 3 });
  }
  const canonical = /<link\b[^>]*rel\s*=\s*["']canonical["'][^>]*>/i.exec(html);
  const href = canonical && attr(canonical[0], 'href');
  if (href) out.push({ key: 'canonical', value: href, rank: 3 });
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  if (title) out.push({ key: 'title', value: stripTags(title[1]!), rank: 4 });
  const h1 = /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html);
  if (h1) out.push({ key: 'headline', value: stripTags(h1[1]!), rank: 4 });
  for (const m of html.matchAll(/<dt[^>]*>([\s\S]*?)<\/dt>\s*<dd[^>]*>([\s\S]*?)<\/dd>/gi))
    out.push({ key: stripTags(m[1]!), value: stripTags(m[2]!), rank: 5 });
  for (const m of html.matchAll(/<th[^>]*>([\s\S]*?)<\/th>\s*<td[^>]*>([\s\S]*?)<\/td>/gi))
    out.push({ key: stripTags(m[1]!), value: stripTags(m[2]!), rank: 5 });
  const text = html
    .replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, ' ')
    .replace(/<(br|\/p|\/div|\/li|\/tr|\/h\d)[^>]*>/gi, '\n');
  for (const line of stripTagsKeepLines(text)) {
    const m = /^([\p{L}][\p{L}\p{N} _/-]{0,40}?)\s*[:：]\s*(.{1,300})$/u.exec(line);
    if (m) out.push({ key: m[1]!.trim(), value: m[2]!.trim(), rank: 6 });
  }
  return out;
}

function stripTagsKeepLines(s: string): string[] {
  return decode(s.replace(/<[^>]+>/g, ' '))
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

function coerce(value: unknown, schema: JsonSchema): unknown {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'number' || type === 'integer') {
    if (typeof value === 'number') return type === 'integer' ? Math.round(value) : value;
    const m = /-?\d[\d\s.,]*/.exec(String(value));
    if (!m) return undefined;
    let s = m[0].replace(/\s/g, '');
    // "1.234,56" (European) vs "1,234.56": the last separator is the decimal one when two kinds appear.
    if (s.includes(',') && s.includes('.'))
      s =
        s.lastIndexOf(',') > s.lastIndexOf('.')
          ? s.replace(/\./g, '').replace(',', '.')
          : s.replace(/,/g, '');
    else if (/,\d{1,2}$/.test(s)) s = s.replace(',', '.');
    else s = s.replace(/,/g, '');
    const n = Number(s);
    if (!Number.isFinite(n)) return undefined;
    return type === 'integer' ? Math.round(n) : n;
  }
  if (type === 'boolean') {
    const s = String(value).toLowerCase();
    if (/^(true|yes|1|in ?stock|instock|available)/.test(s) || s.endsWith('/instock')) return true;
    if (/^(false|no|0|out ?of ?stock|outofstock|unavailable)/.test(s) || s.endsWith('/outofstock'))
      return false;
    return undefined;
  }
  if (type === 'array') {
    const items = Array.isArray(value) ? value : String(value).split(/\s*[,;|]\s*/);
    return items.map((v) => coerce(v, schema.items ?? { type: 'string' })).filter((v) => v !== undefined);
  }
  if (type === 'object') return undefined;
  return typeof value === 'string' ? value : String(value);
}

/** Fills the schema's properties from the page; a nested object schema is filled from the same candidates. */
export function extractHeuristic(html: string, schema: JsonSchema): Record<string, unknown> {
  return fill(collectCandidates(html), schema);
}

function fill(candidates: Candidate[], schema: JsonSchema): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [field, sub] of Object.entries(schema.properties ?? {})) {
    if (sub.type === 'object' && sub.properties) {
      const nested = fill(candidates, sub);
      if (Object.keys(nested).length) data[field] = nested;
      continue;
    }
    const want = norm(field);
    const names = [want, ...(SYNONYMS[want] ?? [])];
    const matches = candidates
      .map((c) => {
        const k = norm(c.key);
        const tail = norm(c.key.split(/[.:]/).pop() ?? '');
        const i = names.findIndex((n) => n === k || n === tail);
        return i < 0 ? null : { c, score: c.rank * 2 + (i > 0 ? 1 : 0) + (k === want ? -1 : 0) };
      })
      .filter((m): m is { c: Candidate; score: number } => m !== null)
      .sort((a, b) => a.score - b.score);
    for (const { c } of matches) {
      const v = coerce(c.value, sub);
      if (v !== undefined && v !== '') {
        data[field] = v;
        break;
      }
    }
  }
  return data;
}
