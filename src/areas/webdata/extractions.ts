import { and, desc, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm';
import type { JsonSchema } from '../../core/ai/heuristic-extract.ts';
import type { Environment } from '../../core/auth/caller.ts';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { cursorPage, decodeCursor, keysetSchema } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { pageImages, pageLinks, pageMetadata, parseDocument } from './content.ts';
import { webdataErrors } from './errors.ts';
import { describeFetchError, failureCode, getPage } from './fetch-page.ts';
import { extractFields } from './options/fields.ts';
import type { ScrapeFormat } from './options/schema.ts';
import { scopedContent } from './options/scope.ts';
import type { CreateExtraction, ExtractionOut, ListQuery } from './schema.ts';
import { storeShot } from './store-shot.ts';
import { AUTO_SCHEMA, extractStructured, schemaProblem } from './structured.ts';
import { type ExtractionRequest, webdataExtractions } from './tables.ts';

// Extractions: created `pending` and run by the `webdata.extract` job (pending → processing →
// completed | failed), or inline by a batch or a schedule. The page comes from getPage (guarded fetch, or
// the browser when needed); what is kept depends on the mode (docs/webdata.md).

export type Scope = { orgId: string; environment: string };
export const EXTRACT_JOB = 'webdata.extract';

type Row = typeof webdataExtractions.$inferSelect;

export function toRequest(body: Omit<CreateExtraction, 'url'>): ExtractionRequest {
  const mode = body.mode ?? (body.selectors ? 'selectors' : body.schema ? 'schema' : 'auto');
  if (mode === 'schema' && !body.schema) throw errors.validation('mode "schema" needs a `schema`.');
  if (mode === 'selectors' && !body.selectors)
    throw errors.validation('mode "selectors" needs `selectors` (a field map of CSS selectors).');
  if (body.selectors && mode !== 'selectors')
    throw errors.validation('`selectors` are read in mode "selectors" (leave mode out, or set it so).');
  if (mode === 'raw' && body.formats)
    throw errors.validation('mode "raw" takes no `formats`; ask for formats ["rawHtml"] instead.');
  if (body.schema) {
    const problem = schemaProblem(body.schema);
    if (problem) throw errors.validation(`schema is not a valid JSON schema: ${problem}`);
  }
  return {
    mode,
    schema: body.schema,
    prompt: body.prompt,
    includeLinks: body.includeLinks ?? false,
    includeImages: body.includeImages ?? false,
    includeMetadata: body.includeMetadata ?? true,
    waitForSelector: body.waitForSelector,
    waitForTimeout: body.waitForTimeout,
    formats: body.formats ? [...new Set(body.formats)] : undefined,
    onlyMainContent: body.onlyMainContent,
    includeTags: body.includeTags,
    excludeTags: body.excludeTags,
    actions: body.actions,
    selectors: body.selectors,
    maxAge: body.maxAge,
  };
}

/** The outputs asked for: `formats` when given, else the markdown and includeLinks/includeImages. */
function wanted(req: ExtractionRequest): Set<ScrapeFormat> {
  if (req.formats) return new Set(req.formats);
  const out = new Set<ScrapeFormat>(req.mode === 'raw' ? [] : ['markdown']);
  if (req.includeLinks) out.add('links');
  if (req.includeImages) out.add('images');
  return out;
}

export async function insertExtraction(
  deps: Deps,
  scope: Scope,
  url: string,
  request: ExtractionRequest,
  batchId?: string,
): Promise<Row> {
  const [row] = await deps.db.orm
    .insert(webdataExtractions)
    .values({
      ...scope,
      url,
      mode: request.mode,
      status: 'pending',
      request,
      batchId: batchId ?? null,
      createdAt: deps.clock.now(),
    })
    .returning();
  return row!;
}

export async function createExtraction(deps: Deps, scope: Scope, body: CreateExtraction) {
  const request = toRequest(body);
  const row = await insertExtraction(deps, scope, body.url, request);
  await deps.jobs.enqueue(EXTRACT_JOB, { extractionId: row.id });
  return { id: row.id, status: row.status };
}

/** Runs one extraction to its end state; never throws for a page's failure (it is stored). */
export async function runExtraction(deps: Deps, id: string, signal?: AbortSignal): Promise<Row | undefined> {
  const [claimed] = await deps.db.orm
    .update(webdataExtractions)
    .set({ status: 'processing' })
    .where(and(eq(webdataExtractions.id, id), eq(webdataExtractions.status, 'pending')))
    .returning();
  if (!claimed) return undefined;
  const started = performance.now();
  let patch: Partial<Row>;
  try {
    const reused = await recentResult(deps, claimed);
    patch = { ...(reused ?? (await extract(deps, claimed, signal))), status: 'completed' };
  } catch (err) {
    patch = { status: 'failed', error: describeFetchError(err), errorCode: failureCode(err) };
  }
  const [done] = await deps.db.orm
    .update(webdataExtractions)
    .set({
      ...patch,
      processingTimeMs: Math.round(performance.now() - started),
      completedAt: deps.clock.now(),
    })
    .where(eq(webdataExtractions.id, id))
    .returning();
  return done;
}

async function extract(deps: Deps, row: Row, signal?: AbortSignal): Promise<Partial<Row>> {
  const req = row.request;
  const want = wanted(req);
  const shot = want.has('screenshot@fullPage')
    ? { fullPage: true }
    : want.has('screenshot')
      ? { fullPage: false }
      : undefined;
  const page = await getPage(deps, row.url, {
    waitForSelector: req.waitForSelector,
    waitForTimeout: req.waitForTimeout,
    actions: req.actions,
    screenshot: shot,
    signal,
  });
  const doc = parseDocument(page.html);
  const out: Partial<Row> = {
    finalUrl: page.finalUrl,
    fetchedWith: page.fetchedWith,
    pageMetadata: req.includeMetadata === false ? null : pageMetadata(doc, page.finalUrl),
    links: want.has('links') ? pageLinks(doc, page.finalUrl) : null,
    images: want.has('images') ? pageImages(doc, page.finalUrl) : null,
    rawHtml: want.has('rawHtml') ? page.html : null,
    screenshot: page.screenshot
      ? await storeShot(deps, row, page.screenshot, {
          name: `extraction-${row.id}.png`,
          folder: 'webdata/extractions',
          metadata: { extractionId: row.id, url: row.url },
        })
      : null,
    extractedData: {},
    markdown: null,
  };
  if (req.mode === 'raw') return { ...out, extractedData: { html: page.html } };
  // Selector fields read the page as it is; the content choice below changes the parsed document.
  const fields = req.mode === 'selectors' ? extractFields(doc, page.finalUrl, req.selectors ?? {}) : null;
  const content = scopedContent(doc, page.finalUrl, req);
  const kept = {
    ...out,
    html: want.has('html') ? content.html : null,
    markdown: want.has('markdown') ? content.markdown : null,
  };
  if (req.mode === 'markdown') return kept;
  if (fields) return { ...kept, extractedData: fields, extractedBy: 'selectors' };
  const schema = (req.schema ?? AUTO_SCHEMA) as JsonSchema;
  const s = await extractStructured(deps, {
    html: page.html,
    markdown: content.markdown,
    schema,
    prompt: req.prompt,
    signal,
  });
  return { ...kept, extractedData: s.data, extractedBy: s.extractedBy, tokensUsed: s.tokens };
}

const REUSED: (keyof Row)[] = [
  'extractedData',
  'markdown',
  'pageMetadata',
  'links',
  'images',
  'html',
  'rawHtml',
  'screenshot',
  'extractedBy',
  'finalUrl',
];

/**
 * maxAge: the newest completed extraction of the same URL, asked with the same options by the same
 * organization and environment, finished within maxAge ms, is copied instead of fetching the page again
 * (`fetchedWith: "cache"`, no model tokens spent).
 */
async function recentResult(deps: Deps, row: Row): Promise<Partial<Row> | null> {
  const { maxAge, ...rest } = row.request;
  if (!maxAge) return null;
  const since = new Date(deps.clock.now().getTime() - maxAge);
  const [hit] = await deps.db.orm
    .select()
    .from(webdataExtractions)
    .where(
      and(
        eq(webdataExtractions.orgId, row.orgId),
        eq(webdataExtractions.environment, row.environment),
        eq(webdataExtractions.url, row.url),
        eq(webdataExtractions.status, 'completed'),
        gte(webdataExtractions.completedAt, since),
        sql`(${webdataExtractions.request} - 'maxAge') = ${JSON.stringify(rest)}::jsonb`,
      ),
    )
    .orderBy(desc(webdataExtractions.completedAt))
    .limit(1);
  if (!hit) return null;
  const out: Partial<Row> = { fetchedWith: 'cache' };
  for (const k of REUSED) (out as Record<string, unknown>)[k] = hit[k];
  return out;
}

export function extractionOut(r: Row): ExtractionOut {
  return {
    id: r.id,
    url: r.url,
    mode: r.mode,
    status: r.status,
    extractedData: r.extractedData ?? null,
    markdown: r.markdown,
    pageMetadata: r.pageMetadata,
    links: r.links ?? undefined,
    images: r.images ?? undefined,
    html: r.html ?? undefined,
    rawHtml: r.rawHtml ?? undefined,
    screenshot: r.screenshot
      ? {
          url: r.screenshot.url,
          width: r.screenshot.width,
          height: r.screenshot.height,
          truncated: r.screenshot.truncated,
        }
      : undefined,
    extractedBy: r.extractedBy,
    fetchedWith: r.fetchedWith,
    finalUrl: r.finalUrl,
    tokensUsed: r.tokensUsed,
    processingTimeMs: r.processingTimeMs,
    error: r.error,
    errorCode: r.errorCode,
    batchId: r.batchId,
    createdAt: r.createdAt.toISOString(),
    completedAt: r.completedAt?.toISOString() ?? null,
  };
}

const mine = (scope: Scope) =>
  and(eq(webdataExtractions.orgId, scope.orgId), eq(webdataExtractions.environment, scope.environment));

export async function getExtraction(deps: Deps, scope: Scope, id: string): Promise<ExtractionOut> {
  if (!isUuid(id)) throw webdataErrors.extractionNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(webdataExtractions)
    .where(and(mine(scope), eq(webdataExtractions.id, id)));
  if (!row) throw webdataErrors.extractionNotFound();
  return extractionOut(row);
}

export async function listExtractions(deps: Deps, scope: Scope, q: ListQuery) {
  const cursorScope = `webdata.extractions:${scope.orgId}:${scope.environment}`;
  const conds: (SQL | undefined)[] = [mine(scope)];
  if (q.status) conds.push(eq(webdataExtractions.status, q.status));
  if (q.url) conds.push(eq(webdataExtractions.url, q.url));
  if (q.cursor) {
    const k = decodeCursor(deps.keyring, cursorScope, q.cursor, keysetSchema);
    const at = new Date(k.at);
    conds.push(
      or(
        lt(webdataExtractions.createdAt, at),
        and(eq(webdataExtractions.createdAt, at), lt(webdataExtractions.id, k.id)),
      ),
    );
  }
  const rows = await deps.db.orm
    .select()
    .from(webdataExtractions)
    .where(and(...conds))
    .orderBy(desc(webdataExtractions.createdAt), desc(webdataExtractions.id))
    .limit(q.limit + 1);
  const page = cursorPage(deps.keyring, cursorScope, rows, q.limit, (r) => ({
    at: r.createdAt.toISOString(),
    id: r.id,
  }));
  return { items: page.items.map(extractionOut), nextCursor: page.nextCursor };
}

export async function deleteExtraction(deps: Deps, scope: Scope, id: string) {
  if (!isUuid(id)) throw webdataErrors.extractionNotFound();
  const gone = await deps.db.orm
    .delete(webdataExtractions)
    .where(and(mine(scope), eq(webdataExtractions.id, id)))
    .returning({ id: webdataExtractions.id });
  if (gone.length === 0) throw webdataErrors.extractionNotFound();
  return { success: true as const };
}
