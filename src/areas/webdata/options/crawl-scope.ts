import type { Deps } from '../../../deps.ts';
import type { Robots } from '../crawl-site.ts';
import { looksLikePage, normalizeUrl } from '../crawl-site.ts';
import { readSitemaps } from '../map.ts';
import type { CrawlOptions } from '../tables.ts';

// Which URLs a crawl may take, by the crawl's options: the site's host (`www.` ignored), or with
// allowSubdomains any host under it; includePaths/excludePaths as regexes on the URL's path (Firecrawl's
// rule: a link is followed when its path matches one of includePaths, if any, and none of excludePaths;
// the start page itself is always fetched). And the sitemap's URLs, when the crawl is seeded from it.

const bareHost = (h: string) => h.toLowerCase().replace(/^www\./, '');

/** Sitemap URLs taken into one crawl at most: the queue is strings, but a bound all the same. */
const MAX_SEEDS = 50_000;

export type CrawlScope = {
  /** The URL is on the crawl's site (or a subdomain of it, when allowed). */
  onSite(url: string): boolean;
  /** The URL is on the site, a page, and its path passes includePaths/excludePaths. */
  follows(url: string): boolean;
};

export function crawlScope(start: string, o: CrawlOptions): CrawlScope {
  const home = bareHost(new URL(start).hostname);
  const include = (o.includePaths ?? []).map((p) => new RegExp(p));
  const exclude = (o.excludePaths ?? []).map((p) => new RegExp(p));
  const onSite = (url: string) => {
    try {
      const host = bareHost(new URL(url).hostname);
      return host === home || (o.allowSubdomains === true && host.endsWith(`.${home}`));
    } catch {
      return false;
    }
  };
  return {
    onSite,
    follows(url) {
      if (!onSite(url) || !looksLikePage(url)) return false;
      const path = new URL(url).pathname;
      if (include.length > 0 && !include.some((r) => r.test(path))) return false;
      return !exclude.some((r) => r.test(path));
    },
  };
}

/** The URLs the site's sitemaps list (robots.txt's Sitemap lines, else /sitemap.xml) that the crawl takes. */
export async function sitemapSeeds(
  deps: Deps,
  start: string,
  robots: Robots,
  scope: CrawlScope,
): Promise<string[]> {
  const origin = new URL(start).origin;
  const first = robots.sitemaps.length ? robots.sitemaps : [new URL('/sitemap.xml', origin).toString()];
  const out = new Set<string>();
  for (const raw of await readSitemaps(deps, first)) {
    const url = normalizeUrl(raw);
    if (!url || url === start || !scope.follows(url) || !robots.allowed(url)) continue;
    out.add(url);
    if (out.size >= MAX_SEEDS) break;
  }
  return [...out];
}
