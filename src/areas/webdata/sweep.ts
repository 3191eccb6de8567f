import { and, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { BATCH_JOB, batchHook, countsOf } from './batches.ts';
import { webdataBatches, webdataBatchItems, webdataCrawls } from './tables.ts';
import { emitWebhook } from './webhooks.ts';

// Batches and crawls whose worker stopped mid-way (a crash, a kill, a deploy) would otherwise stay
// `processing` for ever. A running one is stamped (`heartbeat_at`) every HEARTBEAT_MS; the sweeper, run at
// every worker start and on the schedules' minute tick, takes the ones whose stamp is older than STALE_MS:
// a batch is resumed (its in-flight items go back to pending and the batch job is queued again; the items
// already done keep their results and counts), up to MAX_RESUMES times, then failed; a crawl is failed with
// its reason (its frontier lived in the dead worker's memory) and keeps the pages it stored. A worker that
// stops gracefully releases its stamp, so the next worker start picks its work up at once. Decision 073.

export const STALE_MS = 5 * 60_000;
export const MAX_RESUMES = 3;

export const CRAWL_INTERRUPTED =
  'The crawl was interrupted: the worker running it stopped. The pages stored before are kept.';
export const BATCH_GAVE_UP = 'The batch was interrupted too many times (its worker kept stopping).';
export async function sweepInterrupted(
  deps: Deps,
): Promise<{ resumed: string[]; failedBatches: string[]; failedCrawls: string[] }> {
  const now = deps.clock.now();
  const stale = (t: typeof webdataBatches | typeof webdataCrawls) =>
    and(
      eq(t.status, 'processing'),
      or(lt(t.heartbeatAt, new Date(now.getTime() - STALE_MS)), isNull(t.heartbeatAt)),
    );

  // The update's WHERE re-checks staleness, so of several sweepers only one takes a given row.
  const resumed = await deps.db.orm
    .update(webdataBatches)
    .set({ status: 'pending', heartbeatAt: now, resumes: sql`${webdataBatches.resumes} + 1` })
    .where(and(stale(webdataBatches), lt(webdataBatches.resumes, MAX_RESUMES)))
    .returning({ id: webdataBatches.id });
  for (const { id } of resumed) {
    await deps.db.orm
      .update(webdataBatchItems)
      .set({ status: 'pending' })
      .where(and(eq(webdataBatchItems.batchId, id), eq(webdataBatchItems.status, 'processing')));
    await deps.jobs.enqueue(BATCH_JOB, { batchId: id });
  }

  const failedBatches = await deps.db.orm
    .update(webdataBatches)
    .set({ status: 'failed', completedAt: now })
    .where(stale(webdataBatches))
    .returning({ id: webdataBatches.id });
  for (const { id } of failedBatches) {
    await deps.db.orm.transaction(async (tx) => {
      const left = await tx
        .update(webdataBatchItems)
        .set({ status: 'failed', error: BATCH_GAVE_UP })
        .where(
          and(
            eq(webdataBatchItems.batchId, id),
            inArray(webdataBatchItems.status, ['pending', 'processing']),
          ),
        )
        .returning({ id: webdataBatchItems.id });
      await tx
        .update(webdataBatches)
        .set({
          processedUrls: sql`${webdataBatches.processedUrls} + ${left.length}`,
          failedUrls: sql`${webdataBatches.failedUrls} + ${left.length}`,
        })
        .where(eq(webdataBatches.id, id));
    });
    const [b] = await deps.db.orm.select().from(webdataBatches).where(eq(webdataBatches.id, id));
    if (b) await batchHook(deps, b, 'failed', { ...countsOf(b), error: BATCH_GAVE_UP });
  }

  const failedCrawls = await deps.db.orm
    .update(webdataCrawls)
    .set({ status: 'failed', error: CRAWL_INTERRUPTED, pagesQueued: 0, completedAt: now })
    .where(stale(webdataCrawls))
    .returning();
  for (const c of failedCrawls) {
    await emitWebhook(deps, c, 'crawl', c.webhook, 'failed', {
      id: c.id,
      url: c.url,
      status: c.status,
      pagesCrawled: c.pagesCrawled,
      pagesFailed: c.pagesFailed,
      error: c.error,
    });
  }

  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
  if (resumed.length + failedBatches.length + failedCrawls.length > 0) {
    deps.log.warn(
      { resumed: ids(resumed), failedBatches: ids(failedBatches), failedCrawls: ids(failedCrawls) },
      'web data work left by a stopped worker',
    );
  }
  return { resumed: ids(resumed), failedBatches: ids(failedBatches), failedCrawls: ids(failedCrawls) };
}
