import { eq, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import type { PageDigest } from './content.ts';
import { ConvertPool } from './convert-pool.ts';
import { crawlShot, digestWants, renderWithShot, SHOT_LANES, storeCrawlShot } from './crawl-outputs.ts';
import { loadRobots, normalizeUrl, type Robots } from './crawl-site.ts';
import {
  describeFetchError,
  failureCode,
  fetchRaw,
  HttpFailure,
  isHtml,
  needsJavaScript,
  PageFailure,
} from './fetch-page.ts';
import { keepAlive, releaseStamp } from './heartbeat.ts';
import { recentCrawlPage } from './options/crawl-cache.ts';
import { crawlScope, sitemapSeeds } from './options/crawl-scope.ts';
import { rendererOf } from './plugins.ts';
import { type CrawlOptions, webdataCrawlPages, webdataCrawls } from './tables.ts';
import { emitWebhook, type WebhookEvent } from './webhooks.ts';

// A crawl, run by the `webdata.crawl` job: breadth-first from the start page (depth 0) over links of the
// same site (host, `www.` ignored), at most maxDepth link hops and exactly maxPages stored pages when the
// site has that many. A URL is fetched once (normalised: no fragment), and a page whose canonical URL or
// final URL after redirects was already stored is dropped. With respectRobotsTxt, disallowed URLs are not
// fetched and Crawl-delay spaces requests (one at a time). Politeness otherwise: WEBDATA_CRAWL_CONCURRENCY
// requests at once to the site. Every fetch goes through the SSRF guard. The crawl's status is re-read
// before each page, so a cancel stops it within one page per lane.

export const CRAWL_JOB = 'webdata.crawl';

type Crawl = typeof webdataCrawls.$inferSelect;
type Item = { url: string; depth: number };
type Shot = { bytes: Buffer; width: number; height: number; truncated: boolean };

export async function runCrawl(deps: Deps, crawlId: string, signal?: AbortSignal): Promise<void> {
  const [crawl] = await deps.db.orm
    .update(webdataCrawls)
    .set({ status: 'processing', heartbeatAt: deps.clock.now() })
    .where(sql`${webdataCrawls.id} = ${crawlId} and ${webdataCrawls.status} = 'pending'`)
    .returning();
  if (!crawl) return;
  const hook = (event: WebhookEvent, data: Record<string, unknown>) =>
    emitWebhook(deps, crawl, 'crawl', crawl.webhook, event, { id: crawlId, url: crawl.url, ...data });
  await hook('started', { status: 'processing' });
  const stopBeat = keepAlive(deps, webdataCrawls, crawlId);
  // A page gets the fetch's time limit again to convert (a 750 KB page takes ~2 s on a quiet core).
  const pool = new ConvertPool(deps.config.webdata.convertThreads, deps.config.webdata.fetchTimeoutMs);
  let end: Crawl | undefined;
  try {
    await crawlSite(deps, crawl, pool, signal);
    // Stopped by a shutdown, not finished: released, so the next worker's sweep ends it with its reason.
    if (signal?.aborted) await releaseStamp(deps, webdataCrawls, crawlId);
    else end = await finish(deps, crawlId, { status: 'completed' });
  } catch (err) {
    if (signal?.aborted) await releaseStamp(deps, webdataCrawls, crawlId);
    else end = await finish(deps, crawlId, { status: 'failed', error: describeFetchError(err) });
  } finally {
    stopBeat();
    await pool.close();
  }
  // A cancelled crawl ends as `completed` with status `cancelled`: it ended, and not by a failure.
  if (end) {
    await hook(end.status === 'failed' ? 'failed' : 'completed', {
      status: end.status,
      pagesCrawled: end.pagesCrawled,
      pagesFailed: end.pagesFailed,
      error: end.error,
    });
  }
}

/** Ends a running crawl; answers its final row (a crawl cancelled meanwhile keeps `cancelled`). */
async function finish(deps: Deps, id: string, patch: { status: 'completed' | 'failed'; error?: string }) {
  await deps.db.orm
    .update(webdataCrawls)
    .set({ ...patch, pagesQueued: 0, completedAt: deps.clock.now() })
    .where(sql`${webdataCrawls.id} = ${id} and ${webdataCrawls.status} = 'processing'`);
  const [row] = await deps.db.orm.select().from(webdataCrawls).where(eq(webdataCrawls.id, id));
  return row;
}

async function crawlSite(deps: Deps, crawl: Crawl, pool: ConvertPool, signal?: AbortSignal): Promise<void> {
  const o: CrawlOptions = crawl.options;
  const start = normalizeUrl(crawl.url)!;
  const robots: Robots = o.respectRobotsTxt
    ? await loadRobots(deps, new URL(start).origin, signal)
    : { allowed: () => true, crawlDelaySec: 0, sitemaps: [] };
  const delayMs = robots.crawlDelaySec * 1000;
  const shot = crawlShot(o);
  const want = digestWants(o);
  const lanes =
    delayMs > 0 ? 1 : Math.min(deps.config.webdata.crawlConcurrency, shot ? SHOT_LANES : Infinity);

  const scope = crawlScope(start, o);
  const sitemap = o.sitemap ?? 'skip';
  const queue: Item[] = [{ url: start, depth: 0 }];
  const seen = new Set([start]);
  // Sitemap URLs are one hop from the start (the sitemap is the link); with `only` no other link is taken.
  if (sitemap !== 'skip') {
    for (const url of await sitemapSeeds(deps, start, robots, scope)) {
      seen.add(url);
      queue.push({ url, depth: 1 });
    }
  }
  const followLinks = sitemap !== 'only';
  const stored = new Set<string>();
  let reserved = 0; // pages stored or being fetched: never more than maxPages
  let seq = 0; // rows written, stored and failed pages alike: the pages' order
  let shots = 0; // screenshots stored: their file names
  let crawled = 0;
  let failed = 0;
  let lastStart = 0;
  let active = 0;
  let stop = false;

  const stillRunning = async () => {
    if (signal?.aborted) return false;
    const [row] = await deps.db.orm
      .select({ status: webdataCrawls.status })
      .from(webdataCrawls)
      .where(eq(webdataCrawls.id, crawl.id));
    return row?.status === 'processing';
  };

  // A failed page gives its place back and is recorded (URL, status, reason) for the crawl's
  // failedPages; a failed start page fails the crawl.
  const pageFailed = async (item: Item, err: unknown, status: number | null) => {
    failed++;
    reserved--;
    if (item.depth === 0) throw err;
    const error = describeFetchError(err);
    const errorCode = failureCode(err);
    await deps.db.orm.insert(webdataCrawlPages).values({
      crawlId: crawl.id,
      seq: seq++,
      url: item.url,
      depth: item.depth,
      statusCode: status,
      error,
      errorCode,
      createdAt: deps.clock.now(),
    });
    await pageHook({
      url: item.url,
      depth: item.depth,
      statusCode: status,
      title: null,
      markdown: null,
      error,
      errorCode,
    });
  };
  const pageHook = (page: Record<string, unknown>) =>
    emitWebhook(deps, crawl, 'crawl', crawl.webhook, 'page', { id: crawl.id, url: crawl.url, page });

  const crawlOne = async (item: Item) => {
    let page: { html: string; finalUrl: string; status: number; screenshot?: Shot };
    let digest: PageDigest;
    // A screenshot is a fresh look at the page: a crawl that asks for one does not reuse stored pages.
    const reused = o.maxAge && !shot ? await recentCrawlPage(deps, crawl, item.url) : null;
    if (reused) {
      page = { html: reused.rawHtml ?? '', finalUrl: reused.url, status: reused.statusCode ?? 200 };
      digest = { ...reused, canonical: null };
    } else {
      if (delayMs > 0) {
        const wait = lastStart + delayMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        lastStart = Date.now();
      }
      try {
        page = shot
          ? await renderWithShot(deps, item.url, shot, signal)
          : await fetchPage(deps, item.url, signal);
      } catch (err) {
        return pageFailed(item, err, err instanceof HttpFailure ? err.status : null);
      }
      try {
        digest = await pool.digest(page.html, page.finalUrl, want, o.scrapeOptions);
      } catch (err) {
        return pageFailed(item, err, page.status);
      }
    }
    const finalKey = normalizeUrl(page.finalUrl) ?? item.url;
    const canonical = digest.canonical;
    const canonicalKey = canonical && scope.onSite(canonical) ? normalizeUrl(canonical) : null;
    const keys = [item.url, finalKey, canonicalKey].filter((k): k is string => Boolean(k));
    if (!scope.onSite(page.finalUrl) || keys.some((k) => stored.has(k))) {
      reserved--;
      return;
    }
    for (const k of keys) {
      stored.add(k);
      seen.add(k);
    }
    const links = digest.links;
    if (followLinks && item.depth < o.maxDepth) {
      for (const link of links) {
        const key = normalizeUrl(link);
        if (!key || seen.has(key) || !scope.follows(key)) continue;
        seen.add(key);
        if (!robots.allowed(key)) continue;
        queue.push({ url: key, depth: item.depth + 1 });
      }
    }
    let screenshot: Awaited<ReturnType<typeof storeCrawlShot>> | null = null;
    try {
      if (page.screenshot)
        screenshot = await storeCrawlShot(deps, crawl, shots++, page.finalUrl, page.screenshot);
    } catch (err) {
      // The picture could not be stored (the CDN's quota or disk): this page fails, the crawl goes on.
      return pageFailed(
        item,
        new PageFailure(`The screenshot could not be stored: ${(err as Error).message}`),
        page.status,
      );
    }
    const pageSeq = seq++;
    await deps.db.orm.insert(webdataCrawlPages).values({
      crawlId: crawl.id,
      seq: pageSeq,
      url: page.finalUrl,
      depth: item.depth,
      statusCode: page.status,
      title: digest.title,
      markdown: digest.markdown,
      html: want.html ? (digest.html ?? null) : null,
      rawHtml: o.formats.includes('rawHtml') ? page.html : null,
      // Kept whatever the formats (shown only with `links`): a later crawl's maxAge reuse follows them.
      links,
      images: want.images ? (digest.images ?? []) : null,
      screenshot,
      createdAt: deps.clock.now(),
    });
    await pageHook({
      url: page.finalUrl,
      depth: item.depth,
      statusCode: page.status,
      title: digest.title,
      markdown: digest.markdown,
      ...(o.formats.includes('links') ? { links } : {}),
      ...(want.images ? { images: digest.images ?? [] } : {}),
      ...(screenshot
        ? {
            screenshot: {
              url: screenshot.url,
              width: screenshot.width,
              height: screenshot.height,
              truncated: screenshot.truncated,
            },
          }
        : {}),
      error: null,
      errorCode: null,
    });
    await deps.db.orm
      .update(webdataCrawls)
      // Lanes' updates can commit out of order on a pooled PostgreSQL: progress only moves forward.
      .set({
        pagesCrawled: sql`greatest(${webdataCrawls.pagesCrawled}, ${++crawled})`,
        pagesFailed: sql`greatest(${webdataCrawls.pagesFailed}, ${failed})`,
        pagesQueued: queue.length,
      })
      .where(eq(webdataCrawls.id, crawl.id));
  };

  // Lanes take from the FIFO queue, so pages are fetched in breadth-first order. A lane with nothing to
  // take waits while others are still fetching (they may add links).
  await new Promise<void>((resolve, reject) => {
    const pump = () => {
      if (stop) return;
      while (active < lanes && queue.length > 0 && reserved < o.maxPages) {
        const item = queue.shift()!;
        reserved++;
        active++;
        (async () => {
          if (!(await stillRunning())) {
            stop = true;
            return;
          }
          await crawlOne(item);
        })().then(
          () => {
            active--;
            if (stop && active === 0) resolve();
            else pump();
          },
          (err) => {
            stop = true;
            reject(err);
          },
        );
      }
      if (active === 0 && (queue.length === 0 || reserved >= o.maxPages)) resolve();
    };
    if (robots.allowed(start)) pump();
    else reject(new PageFailure('Blocked by robots.txt: the start page is disallowed for crawlers.'));
  });
  // Every lane has ended: the final counts, whatever order their updates committed in.
  await deps.db.orm
    .update(webdataCrawls)
    .set({ pagesCrawled: crawled, pagesFailed: failed })
    .where(eq(webdataCrawls.id, crawl.id));
}

async function fetchPage(deps: Deps, url: string, signal?: AbortSignal) {
  const res = await fetchRaw(deps, url, { signal });
  if (res.status >= 400) throw new HttpFailure(res.status);
  if (!isHtml(res)) throw new PageFailure('Not HTML.', 'PAGE_UNUSABLE');
  const html = res.text();
  const renderer = rendererOf(deps);
  if (renderer && needsJavaScript(html)) return renderer.render(res.url, { signal });
  return { html, finalUrl: res.url, status: res.status };
}
