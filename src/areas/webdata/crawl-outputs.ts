import type { Deps } from '../../deps.ts';
import type { DigestWants } from './content.ts';
import { getPage } from './fetch-page.ts';
import { storeShot } from './store-shot.ts';
import type { CrawlOptions, webdataCrawls } from './tables.ts';

// A crawl's formats beyond markdown and links: what each page's conversion is asked for, and the
// screenshot formats, for which every page is loaded in the browser (one page gives the rendered HTML
// and the picture, as an extraction's does) and the picture stored on the CDN.

/** Pages a crawl with screenshots loads in the browser at once (the shared pool bounds the process). */
export const SHOT_LANES = 2;

export function digestWants(o: CrawlOptions): DigestWants {
  return {
    markdown: o.formats.includes('markdown'),
    html: o.formats.includes('html'),
    images: o.formats.includes('images'),
  };
}

/** The screenshot a crawl takes of each page, or null. */
export function crawlShot(o: CrawlOptions): { fullPage: boolean } | null {
  if (o.formats.includes('screenshot@fullPage')) return { fullPage: true };
  return o.formats.includes('screenshot') ? { fullPage: false } : null;
}

type Crawl = typeof webdataCrawls.$inferSelect;

/** Loads the page in the browser with its screenshot (fails the page, not the crawl, when it cannot). */
export async function renderWithShot(
  deps: Deps,
  url: string,
  shot: { fullPage: boolean },
  signal?: AbortSignal,
) {
  const page = await getPage(deps, url, { signal, screenshot: shot });
  return { html: page.html, finalUrl: page.finalUrl, status: page.status, screenshot: page.screenshot };
}

export function storeCrawlShot(
  deps: Deps,
  crawl: Crawl,
  n: number,
  url: string,
  shot: { bytes: Buffer; width: number; height: number; truncated: boolean },
) {
  const file = {
    name: `crawl-${crawl.id}-${n}.png`,
    folder: 'webdata/crawls',
    metadata: { crawlId: crawl.id, url },
  };
  return storeShot(deps, crawl, shot, file);
}
