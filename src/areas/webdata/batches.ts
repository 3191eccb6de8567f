import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import { webdataErrors } from './errors.ts';
import { insertExtraction, runExtraction, type Scope, toRequest } from './extractions.ts';
import { keepAlive, releaseStamp } from './heartbeat.ts';
import { type KindRunner, screenshotRunnerOf } from './plugins.ts';
import { createExtractionBody } from './schema.ts';
import { checkScreenshotConfig, runScreenshotKind } from './screenshots/kind.ts';
import { type BatchKind, webdataBatches, webdataBatchItems } from './tables.ts';
import { emitWebhook, storeWebhook, type WebhookBody, type WebhookEvent, webhookOut } from './webhooks.ts';

// Batch jobs of either kind: one row per batch and one per URL. The `webdata.batch` job works through the
// pending items a few at a time, re-reading the batch's status before each one, so a cancel leaves the
// remaining items `cancelled` and unprocessed. Counters are updated in SQL per item, so they add up:
// processed = successful + failed, and at the end processed + cancelled items = total.

export const BATCH_JOB = 'webdata.batch';
const ITEM_CONCURRENCY = 2;

/** The extraction kind: the batch config is an extraction body without the url. */
export const runExtractionKind: KindRunner = async (deps, scope, url, config, ctx) => {
  const row = await insertExtraction(deps, scope, url, toRequest(config), ctx.batchId);
  const done = await runExtraction(deps, row.id, ctx.signal);
  return {
    resultId: row.id,
    ok: done?.status === 'completed',
    error: done?.error ?? null,
    errorCode: done?.status === 'completed' ? null : (done?.errorCode ?? null),
    content: done?.markdown ?? (done?.extractedData ? JSON.stringify(done.extractedData) : null),
  };
};

/** The runner of a kind; a plugged-in screenshot runner (plugins.ts) replaces the Chromium one in tests. */
export function runnerFor(deps: Deps, kind: BatchKind): KindRunner {
  if (kind === 'extraction') return runExtractionKind;
  return screenshotRunnerOf(deps) ?? runScreenshotKind;
}

/** Checks a batch's config as its kind's create body would (a bad config is a 400, not N failures). */
export function checkConfig(kind: BatchKind, config: Record<string, unknown>): Record<string, unknown> {
  if (kind === 'screenshot') return checkScreenshotConfig(config);
  const parsed = createExtractionBody.omit({ url: true }).safeParse(config);
  if (!parsed.success) throw errors.validation(`config: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  toRequest(parsed.data);
  return parsed.data;
}

export async function createBatch(
  deps: Deps,
  scope: Scope,
  kind: BatchKind,
  body: { urls: string[]; config?: Record<string, unknown>; webhook?: WebhookBody },
) {
  const config = checkConfig(kind, body.config ?? {});
  const id = await deps.db.orm.transaction(async (tx) => {
    const [b] = await tx
      .insert(webdataBatches)
      .values({
        ...scope,
        type: kind,
        status: 'pending',
        config,
        totalUrls: body.urls.length,
        webhook: storeWebhook(deps, body.webhook),
        createdAt: deps.clock.now(),
      })
      .returning({ id: webdataBatches.id });
    await tx
      .insert(webdataBatchItems)
      .values(
        body.urls.map((url, position) => ({ batchId: b!.id, position, url, status: 'pending' as const })),
      );
    return b!.id;
  });
  await deps.jobs.enqueue(BATCH_JOB, { batchId: id });
  return { id, status: 'pending' as const, totalUrls: body.urls.length };
}

export async function runBatch(deps: Deps, batchId: string, signal?: AbortSignal): Promise<void> {
  const [b] = await deps.db.orm
    .update(webdataBatches)
    .set({ status: 'processing', heartbeatAt: deps.clock.now() })
    .where(and(eq(webdataBatches.id, batchId), eq(webdataBatches.status, 'pending')))
    .returning();
  if (!b) return;
  // A batch resumed after its worker stopped has already said it started.
  if (b.resumes === 0) await batchHook(deps, b, 'started', { status: 'processing' });
  const stopBeat = keepAlive(deps, webdataBatches, batchId);
  try {
    await workThrough(deps, b, signal);
  } finally {
    stopBeat();
  }
  // Stopped by a shutdown, not finished: the stamp is released so the next worker's sweep resumes it.
  if (signal?.aborted) return releaseStamp(deps, webdataBatches, batchId);
  await deps.db.orm
    .update(webdataBatches)
    .set({ status: 'completed', completedAt: deps.clock.now() })
    .where(and(eq(webdataBatches.id, batchId), eq(webdataBatches.status, 'processing')));
  // A cancelled batch ends as `completed` with status `cancelled`: it ended, and not by a failure.
  const [end] = await deps.db.orm.select().from(webdataBatches).where(eq(webdataBatches.id, batchId));
  if (end) await batchHook(deps, end, 'completed', countsOf(end));
}

type Batch = typeof webdataBatches.$inferSelect;

export const countsOf = (b: Batch) => ({
  status: b.status,
  totalUrls: b.totalUrls,
  processedUrls: b.processedUrls,
  successfulUrls: b.successfulUrls,
  failedUrls: b.failedUrls,
});

export const batchHook = (deps: Deps, b: Batch, event: WebhookEvent, data: Record<string, unknown>) =>
  emitWebhook(deps, b, 'batch', b.webhook, event, { id: b.id, type: b.type, ...data });

async function workThrough(
  deps: Deps,
  b: typeof webdataBatches.$inferSelect,
  signal?: AbortSignal,
): Promise<void> {
  const batchId = b.id;
  const run = runnerFor(deps, b.type);
  const scope = { orgId: b.orgId, environment: b.environment };
  const next = async (): Promise<boolean> => {
    const [live] = await deps.db.orm
      .select({ status: webdataBatches.status })
      .from(webdataBatches)
      .where(eq(webdataBatches.id, batchId));
    if (live?.status !== 'processing' || signal?.aborted) return false;
    // Claim the next pending item; the update's WHERE makes two lanes never take the same one.
    const [item] = await deps.db.orm
      .update(webdataBatchItems)
      .set({ status: 'processing' })
      // SKIP LOCKED and the outer status check: on PostgreSQL two lanes could otherwise pick the same item
      // (the subquery is not re-checked after a concurrent update) and run and count it twice.
      .where(
        and(
          eq(
            webdataBatchItems.id,
            sql`(select id from webdata_batch_items where batch_id = ${batchId} and status = 'pending' order by position limit 1 for update skip locked)`,
          ),
          eq(webdataBatchItems.status, 'pending'),
        ),
      )
      .returning();
    if (!item) return false;
    let res: Awaited<ReturnType<KindRunner>>;
    try {
      res = await run(deps, scope, item.url, b.config, { batchId, signal });
    } catch (err) {
      res = { resultId: null, ok: false, error: (err as Error).message, errorCode: 'PAGE_UNUSABLE' };
    }
    // The item's end state and the batch's counters change together, so a reader never sees them disagree.
    await deps.db.orm.transaction(async (tx) => {
      await tx
        .update(webdataBatchItems)
        .set({
          status: res.ok ? 'completed' : 'failed',
          resultId: res.resultId,
          error: res.error ?? null,
          errorCode: res.ok ? null : (res.errorCode ?? null),
        })
        .where(eq(webdataBatchItems.id, item.id));
      await tx
        .update(webdataBatches)
        .set({
          processedUrls: sql`${webdataBatches.processedUrls} + 1`,
          successfulUrls: sql`${webdataBatches.successfulUrls} + ${res.ok ? 1 : 0}`,
          failedUrls: sql`${webdataBatches.failedUrls} + ${res.ok ? 0 : 1}`,
        })
        .where(eq(webdataBatches.id, batchId));
    });
    const status = res.ok ? 'completed' : 'failed';
    await batchHook(deps, b, 'page', {
      item: {
        url: item.url,
        position: item.position,
        status,
        resultId: res.resultId,
        error: res.error ?? null,
        errorCode: res.ok ? null : (res.errorCode ?? null),
      },
    });
    return true;
  };
  const lane = async () => {
    while (await next()) {}
  };
  await Promise.all(Array.from({ length: ITEM_CONCURRENCY }, lane));
}

const mine = (scope: Scope) =>
  and(eq(webdataBatches.orgId, scope.orgId), eq(webdataBatches.environment, scope.environment));

export async function getBatch(deps: Deps, scope: Scope, id: string) {
  if (!isUuid(id)) throw webdataErrors.batchNotFound();
  const [b] = await deps.db.orm
    .select()
    .from(webdataBatches)
    .where(and(mine(scope), eq(webdataBatches.id, id)));
  if (!b) throw webdataErrors.batchNotFound();
  const items = await deps.db.orm
    .select()
    .from(webdataBatchItems)
    .where(eq(webdataBatchItems.batchId, id))
    .orderBy(asc(webdataBatchItems.position));
  // Counts come from the items just read, not the batch row read a statement earlier: on PostgreSQL an item
  // can finish between the two reads, and the answer must add up (processed + cancelled = total).
  const successfulUrls = items.filter((i) => i.status === 'completed').length;
  const failedUrls = items.filter((i) => i.status === 'failed').length;
  const processedUrls = successfulUrls + failedUrls;
  return {
    id: b.id,
    type: b.type,
    status: b.status,
    totalUrls: b.totalUrls,
    processedUrls,
    successfulUrls,
    failedUrls,
    progress: b.totalUrls ? Math.round((processedUrls / b.totalUrls) * 100) : 100,
    items: items.map((i) => ({
      url: i.url,
      status: i.status,
      resultId: i.resultId,
      error: i.error,
      errorCode: i.errorCode,
    })),
    webhook: webhookOut(b.webhook),
    createdAt: b.createdAt.toISOString(),
    completedAt: b.completedAt?.toISOString() ?? null,
  };
}

/** Cancels a pending or running batch: items not started are marked cancelled and never run. */
export async function cancelBatch(deps: Deps, scope: Scope, id: string) {
  if (!isUuid(id)) throw webdataErrors.batchNotFound();
  const [b] = await deps.db.orm
    .select()
    .from(webdataBatches)
    .where(and(mine(scope), eq(webdataBatches.id, id)));
  if (!b) throw webdataErrors.batchNotFound();
  const [done] = await deps.db.orm
    .update(webdataBatches)
    .set({ status: 'cancelled', completedAt: deps.clock.now() })
    .where(and(eq(webdataBatches.id, id), inArray(webdataBatches.status, ['pending', 'processing'])))
    .returning({ id: webdataBatches.id });
  if (!done) throw webdataErrors.batchNotCancellable(b.status);
  await deps.db.orm
    .update(webdataBatchItems)
    .set({ status: 'cancelled' })
    .where(and(eq(webdataBatchItems.batchId, id), eq(webdataBatchItems.status, 'pending')));
  return { success: true as const };
}
