import { and, desc, eq, gte, isNotNull, isNull, ne, sql } from 'drizzle-orm';
import type { Deps } from '../../../deps.ts';
import { webdataCrawlPages, webdataCrawls } from '../tables.ts';

// maxAge for crawls: a page this organization and environment stored in another crawl within maxAge ms is
// taken from there instead of fetched again — when that crawl kept what this one needs (markdown, HTML,
// raw HTML, images)
// and chose the content the same way (scrapeOptions). Links are stored for every page, so a reused page is
// followed like a fetched one.

export type ReusedPage = {
  url: string;
  statusCode: number | null;
  title: string | null;
  markdown: string | null;
  html: string | null;
  rawHtml: string | null;
  links: string[];
  images: string[] | null;
};

type Crawl = typeof webdataCrawls.$inferSelect;

export async function recentCrawlPage(deps: Deps, crawl: Crawl, url: string): Promise<ReusedPage | null> {
  const o = crawl.options;
  if (!o.maxAge) return null;
  const since = new Date(deps.clock.now().getTime() - o.maxAge);
  const scrape = JSON.stringify(o.scrapeOptions ?? {});
  const [hit] = await deps.db.orm
    .select({
      url: webdataCrawlPages.url,
      statusCode: webdataCrawlPages.statusCode,
      title: webdataCrawlPages.title,
      markdown: webdataCrawlPages.markdown,
      html: webdataCrawlPages.html,
      rawHtml: webdataCrawlPages.rawHtml,
      links: webdataCrawlPages.links,
      images: webdataCrawlPages.images,
    })
    .from(webdataCrawlPages)
    .innerJoin(webdataCrawls, eq(webdataCrawls.id, webdataCrawlPages.crawlId))
    .where(
      and(
        eq(webdataCrawlPages.url, url),
        gte(webdataCrawlPages.createdAt, since),
        isNull(webdataCrawlPages.error),
        isNotNull(webdataCrawlPages.links),
        eq(webdataCrawls.orgId, crawl.orgId),
        eq(webdataCrawls.environment, crawl.environment),
        ne(webdataCrawls.id, crawl.id),
        o.formats.includes('markdown') ? isNotNull(webdataCrawlPages.markdown) : undefined,
        o.formats.includes('html') ? isNotNull(webdataCrawlPages.html) : undefined,
        o.formats.includes('rawHtml') ? isNotNull(webdataCrawlPages.rawHtml) : undefined,
        o.formats.includes('images') ? isNotNull(webdataCrawlPages.images) : undefined,
        sql`coalesce(${webdataCrawls.options} -> 'scrapeOptions', '{}'::jsonb) = ${scrape}::jsonb`,
      ),
    )
    .orderBy(desc(webdataCrawlPages.createdAt))
    .limit(1);
  return hit ? { ...hit, links: hit.links ?? [] } : null;
}
