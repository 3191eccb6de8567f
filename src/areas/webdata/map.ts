import zlib from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';
import type { Deps } from '../../deps.ts';
import { pageLinks, parseDocument } from './content.ts';
import { loadRobots, looksLikePage, normalizeUrl, sameSite } from './crawl-site.ts';
import { fetchRaw, isHtml, PageFailure } from './fetch-page.ts';

// Map: the URLs of a site, answered in the request. Sitemaps first (the `Sitemap:` lines of robots.txt,
// else /sitemap.xml), following sitemap indexes and gunzipping .gz sitemaps, all fetched through the SSRF
// guard and parsed here (sitemap libraries fetch on their own). When no sitemap gives a URL of the site, a
// small breadth-first link crawl (LINK_CRAWL_PAGES pages) collects links instead. `search` keeps URLs
// containing it (case-insensitive); `limit` caps the list.

const MAX_SITEMAPS = 50;
const MAX_SITEMAP_BYTES = 20 * 1024 * 1024;
const LINK_CRAWL_PAGES = 30;
const LINK_CRAWL_LANES = 4;

const xml = new XMLParser({
  ignoreAttributes: true,
  isArray: (name) => name === 'url' || name === 'sitemap',
});

export async function mapSite(deps: Deps, body: { url: string; search?: string; limit: number }) {
  const start = normalizeUrl(body.url)!;
  const origin = new URL(start).origin;
  const robots = await loadRobots(deps, origin);
  const sitemaps = robots.sitemaps.length ? robots.sitemaps : [new URL('/sitemap.xml', origin).toString()];
  const want = (u: string) =>
    sameSite(u, start) && (!body.search || u.toLowerCase().includes(body.search.toLowerCase()));

  const fromSitemaps = (await readSitemaps(deps, sitemaps)).filter((u) => sameSite(u, start));
  if (fromSitemaps.length > 0) {
    const urls = [...new Set(fromSitemaps)].filter(want).slice(0, body.limit);
    return { status: 'completed' as const, url: start, urls, source: 'sitemap' as const };
  }
  const found = await linkCrawl(deps, start);
  const urls = found.filter(want).slice(0, body.limit);
  return { status: 'completed' as const, url: start, urls, source: 'links' as const };
}

export async function readSitemaps(deps: Deps, first: string[]): Promise<string[]> {
  const todo = [...first];
  const done = new Set<string>();
  const urls: string[] = [];
  while (todo.length > 0 && done.size < MAX_SITEMAPS) {
    const at = todo.shift()!;
    if (done.has(at)) continue;
    done.add(at);
    let text: string;
    try {
      const res = await fetchRaw(deps, at, {
        accept: 'application/xml,text/xml,*/*;q=0.5',
        maxBytes: MAX_SITEMAP_BYTES,
      });
      if (!res.ok) continue;
      text = sitemapText(res.body);
    } catch {
      continue;
    }
    let doc: { urlset?: { url?: { loc?: unknown }[] }; sitemapindex?: { sitemap?: { loc?: unknown }[] } };
    try {
      doc = xml.parse(text);
    } catch {
      continue;
    }
    for (const u of doc.urlset?.url ?? []) {
      const loc = normalizeUrl(String(u.loc ?? '').trim());
      if (loc) urls.push(loc);
    }
    for (const s of doc.sitemapindex?.sitemap ?? []) {
      const loc = String(s.loc ?? '').trim();
      if (loc) todo.push(loc);
    }
  }
  return urls;
}

// A gzip sitemap is recognised by its bytes (servers label it application/x-gzip, application/gzip or
// even text/xml with Content-Encoding stripped); the inflated size is capped like the download.
function sitemapText(body: Buffer): string {
  if (body[0] === 0x1f && body[1] === 0x8b) {
    try {
      return zlib.gunzipSync(body, { maxOutputLength: MAX_SITEMAP_BYTES }).toString('utf8');
    } catch {
      throw new PageFailure('The gzip sitemap could not be inflated.');
    }
  }
  return body.toString('utf8');
}

async function linkCrawl(deps: Deps, start: string): Promise<string[]> {
  const found = new Set<string>([start]);
  const queue: string[] = [];
  let fetched = 0;
  const visit = async (url: string) => {
    fetched++;
    const res = await fetchRaw(deps, url);
    if (!res.ok || !isHtml(res)) return false;
    for (const link of pageLinks(parseDocument(res.text()), res.url)) {
      const key = normalizeUrl(link);
      if (!key || found.has(key) || !sameSite(key, start) || !looksLikePage(key)) continue;
      found.add(key);
      queue.push(key);
    }
    return true;
  };
  // The start page's failure is the caller's answer (blocked, unreachable); later pages' are skipped.
  if (!(await visit(start))) throw new PageFailure('The start page is not an HTML page the site serves.');
  const lane = async () => {
    while (queue.length > 0 && fetched < LINK_CRAWL_PAGES) await visit(queue.shift()!).catch(() => false);
  };
  await Promise.all(Array.from({ length: LINK_CRAWL_LANES }, lane));
  return [...found];
}
