import robotsParserModule from 'robots-parser';
import type { Deps } from '../../deps.ts';
import { fetchRaw } from './fetch-page.ts';

// What a crawl and a map know about a site: whether a URL belongs to it, how URLs are normalised for
// de-duplication, and its robots.txt (rules, Crawl-delay, Sitemap lines), fetched once through the guard.

export const ROBOTS_AGENT = 'PierBot';

// The package is CommonJS whose module.exports is the function, while its types describe an ES default
// export: Node (and the server's nodenext check) hand over the function itself, a bundler-style check (the
// dashboard's, which sees these files through the SDK's types) the `default`. Typed here once for both.
type RobotsTxt = {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
};
const robotsParser = robotsParserModule as unknown as (url: string, robotstxt: string) => RobotsTxt;

export type Robots = {
  allowed(url: string): boolean;
  /** Seconds between requests asked by robots.txt for our agent (or `*`), or 0. */
  crawlDelaySec: number;
  sitemaps: string[];
};

const ALLOW_ALL: Robots = { allowed: () => true, crawlDelaySec: 0, sitemaps: [] };

export async function loadRobots(deps: Deps, origin: string, signal?: AbortSignal): Promise<Robots> {
  const robotsUrl = new URL('/robots.txt', origin).toString();
  let text: string;
  try {
    const res = await fetchRaw(deps, robotsUrl, { signal, accept: 'text/plain', maxBytes: 512 * 1024 });
    // A missing robots.txt (4xx) allows everything; a server error is treated the same way here (the
    // page fetches will fail on their own if the site is down).
    if (!res.ok) return ALLOW_ALL;
    text = res.text();
  } catch {
    return ALLOW_ALL;
  }
  const robots = robotsParser(robotsUrl, text);
  const delay = Number(robots.getCrawlDelay(ROBOTS_AGENT) ?? 0);
  return {
    allowed: (url) => robots.isAllowed(url, ROBOTS_AGENT) !== false,
    crawlDelaySec: Number.isFinite(delay) && delay > 0 ? Math.min(delay, 60) : 0,
    sitemaps: robots.getSitemaps(),
  };
}

const bareHost = (h: string) => h.toLowerCase().replace(/^www\./, '');

export function sameSite(a: string, b: string): boolean {
  try {
    return bareHost(new URL(a).hostname) === bareHost(new URL(b).hostname);
  } catch {
    return false;
  }
}

/** The key two URLs of one page share: no fragment, no default port, no trailing `?`. */
export function normalizeUrl(raw: string): string | null {
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    u.hash = '';
    if (u.pathname === '') u.pathname = '/';
    return u.toString().replace(/\?$/, '');
  } catch {
    return null;
  }
}

const NOT_PAGES =
  /\.(pdf|docx?|xlsx?|pptx?|zip|gz|tgz|rar|7z|png|jpe?g|gif|webp|svg|ico|mp[34]|webm|mov|avi|css|js|json|xml|woff2?|ttf)$/i;

/** A link worth fetching as a page (not an asset or a download by its extension). */
export function looksLikePage(url: string): boolean {
  try {
    return !NOT_PAGES.test(new URL(url).pathname);
  } catch {
    return false;
  }
}
