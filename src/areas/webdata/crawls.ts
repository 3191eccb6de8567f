import { and, asc, eq, gt, inArray, isNotNull, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { isUuid } from '../../core/ids.ts';
import { decodeCursor, encodeCursor } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { CRAWL_JOB } from './crawl.ts';
import { webdataErrors } from './errors.ts';
import type { Scope } from './extractions.ts';
import type { CrawlBody } from './schema.ts';
import { webdataCrawlPages, webdataCrawls } from './tables.ts';
import { storeWebhook, webhookOut } from './webhooks.ts';

// The crawl resource: create (pending, queued), read with progress and optionally every page, its pages
// with their own cursor (by fetch order), and cancel. The crawl itself is in crawl.ts.

type Crawl = typeof webdataCrawls.$inferSelect;
type Page = typeof webdataCrawlPages.$inferSelect;

const mine = (scope: Scope) =>
  and(eq(webdataCrawls.orgId, scope.orgId), eq(webdataCrawls.environment, scope.environment));

export async function createCrawl(deps: Deps, scope: Scope, body: CrawlBody) {
  // Firecrawl puts formats in scrapeOptions, Pier's contract beside them: either place, or both, counts.
  const { formats: scrapeFormats, ...content } = body.scrapeOptions ?? {};
  const asked = [...(body.formats ?? []), ...(scrapeFormats ?? [])];
  const [row] = await deps.db.orm
    .insert(webdataCrawls)
    .values({
      ...scope,
      url: body.url,
      status: 'pending',
      options: {
        maxDepth: body.maxDepth,
        maxPages: body.maxPages,
        formats: asked.length ? [...new Set(asked)] : ['markdown'],
        respectRobotsTxt: body.respectRobotsTxt,
        stealth: body.stealth,
        includePaths: body.includePaths,
        excludePaths: body.excludePaths,
        sitemap: body.sitemap,
        allowSubdomains: body.allowSubdomains,
        scrapeOptions: Object.keys(content).length ? content : undefined,
        maxAge: body.maxAge,
      },
      webhook: storeWebhook(deps, body.webhook),
      createdAt: deps.clock.now(),
    })
    .returning();
  await deps.jobs.enqueue(CRAWL_JOB, { crawlId: row!.id });
  return { id: row!.id, status: row!.status };
}

async function own(deps: Deps, scope: Scope, id: string): Promise<Crawl> {
  if (!isUuid(id)) throw webdataErrors.crawlNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(webdataCrawls)
    .where(and(mine(scope), eq(webdataCrawls.id, id)));
  if (!row) throw webdataErrors.crawlNotFound();
  return row;
}

function pageOut(p: Page, formats: string[]) {
  return {
    url: p.url,
    depth: p.depth,
    statusCode: p.statusCode,
    title: p.title,
    markdown: p.markdown,
    ...(formats.includes('html') ? { html: p.html ?? '' } : {}),
    ...(formats.includes('rawHtml') ? { rawHtml: p.rawHtml ?? '' } : {}),
    ...(formats.includes('links') ? { links: p.links ?? [] } : {}),
    ...(formats.includes('images') ? { images: p.images ?? [] } : {}),
    ...(formats.some((f) => f.startsWith('screenshot')) ? { screenshot: shotOut(p.screenshot) } : {}),
    error: p.error,
  };
}

const shotOut = (s: Page['screenshot']) =>
  s ? { url: s.url, width: s.width, height: s.height, truncated: s.truncated } : null;

export async function getCrawl(deps: Deps, scope: Scope, id: string, includePages: boolean) {
  const c = await own(deps, scope, id);
  const out = {
    id: c.id,
    url: c.url,
    status: c.status,
    ...c.options,
    pagesCrawled: c.pagesCrawled,
    pagesFailed: c.pagesFailed,
    pagesQueued: c.pagesQueued,
    error: c.error,
    failedPages: await failedPages(deps, id),
    webhook: webhookOut(c.webhook),
    createdAt: c.createdAt.toISOString(),
    completedAt: c.completedAt?.toISOString() ?? null,
  };
  if (!includePages) return out;
  const rows = await deps.db.orm
    .select()
    .from(webdataCrawlPages)
    .where(and(eq(webdataCrawlPages.crawlId, id), isNull(webdataCrawlPages.error)))
    .orderBy(asc(webdataCrawlPages.seq))
    .limit(PAGES_INCLUDED + 1);
  const pages = rows.slice(0, PAGES_INCLUDED);
  const last = pages[pages.length - 1];
  return {
    ...out,
    pages: pages.map((p) => pageOut(p, c.options.formats)),
    pagesNextCursor:
      rows.length > PAGES_INCLUDED && last
        ? encodeCursor(deps.keyring, pagesCursorScope(id), { seq: last.seq })
        : null,
  };
}

// includePages answers in one body: a 10,000-page crawl's markdown could be a gigabyte in one answer, so
// the first PAGES_INCLUDED pages come inline and pagesNextCursor continues on /crawl/{id}/pages.
const PAGES_INCLUDED = 1000;
const pagesCursorScope = (crawlId: string) => `webdata.crawl.pages:${crawlId}`;

const FAILED_SHOWN = 1000;

// Pages that could not be fetched or converted, in fetch order: URL, the status they answered (null when
// nothing answered) and the reason. At most FAILED_SHOWN; pagesFailed counts them all.
async function failedPages(deps: Deps, crawlId: string) {
  const rows = await deps.db.orm
    .select({
      url: webdataCrawlPages.url,
      statusCode: webdataCrawlPages.statusCode,
      error: webdataCrawlPages.error,
      code: webdataCrawlPages.errorCode,
    })
    .from(webdataCrawlPages)
    .where(and(eq(webdataCrawlPages.crawlId, crawlId), isNotNull(webdataCrawlPages.error)))
    .orderBy(asc(webdataCrawlPages.seq))
    .limit(FAILED_SHOWN);
  return rows.map((r) => ({ url: r.url, statusCode: r.statusCode, error: r.error ?? '', code: r.code }));
}

const seqCursor = z.object({ seq: z.number().int() });

export async function listCrawlPages(
  deps: Deps,
  scope: Scope,
  id: string,
  q: { limit: number; cursor?: string },
) {
  const c = await own(deps, scope, id);
  const cursorScope = pagesCursorScope(id);
  const after = q.cursor ? decodeCursor(deps.keyring, cursorScope, q.cursor, seqCursor).seq : -1;
  const rows = await deps.db.orm
    .select()
    .from(webdataCrawlPages)
    .where(
      and(
        eq(webdataCrawlPages.crawlId, id),
        gt(webdataCrawlPages.seq, after),
        isNull(webdataCrawlPages.error),
      ),
    )
    .orderBy(asc(webdataCrawlPages.seq))
    .limit(q.limit + 1);
  const items = rows.slice(0, q.limit);
  const last = items[items.length - 1];
  return {
    items: items.map((p) => pageOut(p, c.options.formats)),
    nextCursor:
      rows.length > q.limit && last ? encodeCursor(deps.keyring, cursorScope, { seq: last.seq }) : null,
  };
}

export async function cancelCrawl(deps: Deps, scope: Scope, id: string) {
  const c = await own(deps, scope, id);
  const [done] = await deps.db.orm
    .update(webdataCrawls)
    .set({ status: 'cancelled', pagesQueued: 0, completedAt: deps.clock.now() })
    .where(and(eq(webdataCrawls.id, id), inArray(webdataCrawls.status, ['pending', 'processing'])))
    .returning({ id: webdataCrawls.id });
  if (!done) throw webdataErrors.crawlNotCancellable(c.status);
  return { success: true as const };
}
