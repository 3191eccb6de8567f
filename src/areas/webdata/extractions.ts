import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import type { JsonSchema } from '../../core/ai/heuristic-extract.ts';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { cursorPage, decodeCursor, keysetSchema } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { pageImages, pageLinks, pageMetadata, parseDocument, toMarkdown } from './content.ts';
import { webdataErrors } from './errors.ts';
import { describeFetchError, getPage } from './fetch-page.ts';
import type { CreateExtraction, ExtractionOut, ListQuery } from './schema.ts';
import { AUTO_SCHEMA, extractStructured, schemaProblem } from './structured.ts';
import { type ExtractionRequest, webdataExtractions } from './tables.ts';

// Extractions: created `pending` and run by the `webdata.extract` job (pending → processing →
// completed | failed), or inline by a batch or a schedule. The page comes from getPage (guarded fetch, or
// the browser when needed); what is kept depends on the mode (docs/webdata.md).

export type Scope = { orgId: string; environment: string };
export const EXTRACT_JOB = 'webdata.extract';

type Row = typeof webdataExtractions.$inferSelect;

export function toRequest(body: Omit<CreateExtraction, 'url'>): ExtractionRequest {
  const mode = body.mode ?? (body.schema ? 'schema' : 'auto');
  if (mode === 'schema' && !body.schema) throw errors.validation('mode "schema" needs a `schema`.');
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
  };
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
    patch = { ...(await extract(deps, claimed.url, claimed.request, signal)), status: 'completed' };
  } catch (err) {
    patch = { status: 'failed', error: describeFetchError(err) };
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

async function extract(
  deps: Deps,
  url: string,
  req: ExtractionRequest,
  signal?: AbortSignal,
): Promise<Partial<Row>> {
  const page = await getPage(deps, url, {
    waitForSelector: req.waitForSelector,
    waitForTimeout: req.waitForTimeout,
    signal,
  });
  const doc = parseDocument(page.html);
  const out: Partial<Row> = {
    finalUrl: page.finalUrl,
    fetchedWith: page.fetchedWith,
    pageMetadata: req.includeMetadata === false ? null : pageMetadata(doc, page.finalUrl),
    links: req.includeLinks ? pageLinks(doc, page.finalUrl) : null,
    images: req.includeImages ? pageImages(doc, page.finalUrl) : null,
    extractedData: {},
    markdown: null,
  };
  if (req.mode === 'raw') return { ...out, extractedData: { html: page.html } };
  // The parsed document is reused (metadata, links and images were read from it above; conversion changes it).
  const markdown = toMarkdown(doc, page.finalUrl);
  if (req.mode === 'markdown') return { ...out, markdown };
  const schema = (req.schema ?? AUTO_SCHEMA) as JsonSchema;
  const s = await extractStructured(deps, { html: page.html, markdown, schema, prompt: req.prompt, signal });
  return { ...out, markdown, extractedData: s.data, extractedBy: s.extractedBy, tokensUsed: s.tokens };
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
    extractedBy: r.extractedBy,
    fetchedWith: r.fetchedWith,
    finalUrl: r.finalUrl,
    tokensUsed: r.tokensUsed,
    processingTimeMs: r.processingTimeMs,
    error: r.error,
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
