import fsp from 'node:fs/promises';
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import { queueWebhook } from '../../core/webhooks.ts';
import type { Deps } from '../../deps.ts';
import { tenantOf } from './assets.ts';
import { copyBlobTo, scratchDir } from './local-copy.ts';
import { inputProblem, toMergeOuts } from './merge.ts';
import {
  frameSize,
  MergeAborted,
  type MergePlan,
  mergeArgs,
  outputFacts,
  QUALITY_SHORT_EDGE,
  runFfmpeg,
  totalDuration,
} from './merge-ffmpeg.ts';
import type { MergeBody } from './schema.ts';
import { cdnAssets, cdnMergeJobs } from './tables.ts';
import { storeAsset } from './uploads.ts';
import { webhookSecretOf } from './webhook-secret.ts';

// One merge, on a worker: claim the row (pending|queued → processing), copy the inputs locally, run ffmpeg
// with progress written to the row, store the output as a derived asset. Cancel is a row update made by any
// API node: the run polls its row and kills ffmpeg when it sees `cancelled` (and when the job runner's
// signal aborts). ffmpeg failures are final (a retry would fail the same way), so the handler never throws.

const POLL_MS = 400;
/** Merge outputs may pass the 100 MB upload limit (a long 2160p render); this bounds them. */
const MAX_OUTPUT_BYTES = 4 * 1024 ** 3;

export async function runMerge(deps: Deps, mergeId: string, jobSignal?: AbortSignal): Promise<void> {
  const [row] = await deps.db.orm
    .update(cdnMergeJobs)
    .set({ status: 'processing', progress: 0, updatedAt: deps.clock.now() })
    .where(and(eq(cdnMergeJobs.id, mergeId), inArray(cdnMergeJobs.status, ['pending', 'queued'])))
    .returning();
  if (!row) return; // cancelled before it started, or already handled
  const s = { orgId: row.orgId, environment: row.environment as 'production' | 'sandbox' };
  const body = row.request as unknown as MergeBody;
  const dir = await scratchDir('merge');
  const ac = new AbortController();
  const signal = jobSignal ? AbortSignal.any([ac.signal, jobSignal]) : ac.signal;
  let lastProgress = 0;
  const poll = setInterval(() => {
    void deps.db.orm
      .select({ status: cdnMergeJobs.status })
      .from(cdnMergeJobs)
      .where(eq(cdnMergeJobs.id, mergeId))
      .then(([r]) => {
        if (r?.status === 'cancelled') ac.abort();
      })
      .catch(() => {});
  }, POLL_MS);
  try {
    const plan = await planMerge(deps, s, body, dir);
    const total = totalDuration(plan);
    const { outSec } = await runFfmpeg(deps.config.media.ffmpegPath, mergeArgs(plan), {
      totalSec: total,
      signal,
      tag: mergeId,
      onProgress: (pct) => {
        if (pct <= lastProgress) return;
        lastProgress = pct;
        void deps.db.orm
          .update(cdnMergeJobs)
          .set({ progress: pct, updatedAt: deps.clock.now() })
          .where(and(eq(cdnMergeJobs.id, mergeId), eq(cdnMergeJobs.status, 'processing')))
          .catch(() => {});
      },
    });
    const ext = plan.format;
    const filename = body.output.filename ?? `merge-${mergeId}.${ext}`;
    const asset = await storeAsset(deps, {
      ...s,
      file: plan.out,
      known: outputFacts(plan, outSec),
      filename,
      mimeType: ext === 'mp4' ? 'video/mp4' : 'video/webm',
      projectId: row.projectId,
      origin: 'derived',
      metadata: { mergeJobId: mergeId },
      maxBytes: MAX_OUTPUT_BYTES,
    });
    const now = deps.clock.now();
    const [done] = await deps.db.orm
      .update(cdnMergeJobs)
      .set({
        status: 'completed',
        progress: 100,
        outputAssetId: asset.assetId,
        updatedAt: now,
        completedAt: now,
      })
      .where(and(eq(cdnMergeJobs.id, mergeId), eq(cdnMergeJobs.status, 'processing')))
      .returning();
    // Cancelled while the output was being stored: the output goes too.
    if (!done) await deps.db.orm.delete(cdnAssets).where(eq(cdnAssets.id, asset.assetId));
    else await notify(deps, done);
  } catch (err) {
    if (err instanceof MergeAborted && ac.signal.aborted) return; // the cancel already wrote the row
    const now = deps.clock.now();
    const [failed] = await deps.db.orm
      .update(cdnMergeJobs)
      .set({
        status: 'failed',
        error: String((err as Error)?.message ?? err).slice(0, 1000),
        updatedAt: now,
        completedAt: now,
      })
      .where(and(eq(cdnMergeJobs.id, mergeId), eq(cdnMergeJobs.status, 'processing')))
      .returning();
    if (failed) await notify(deps, failed);
  } finally {
    clearInterval(poll);
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/**
 * The completion webhook (`cdn.video.merge.completed` / `.failed`, the job as `data`), signed with the
 * organization's secret and delivered by the core webhook job through the SSRF guard, with its retries.
 */
async function notify(deps: Deps, row: typeof cdnMergeJobs.$inferSelect): Promise<void> {
  if (!row.webhookUrl) return;
  const [job] = await toMergeOuts(deps, [row]);
  await queueWebhook(deps, {
    orgId: row.orgId,
    environment: row.environment,
    url: row.webhookUrl,
    secret: await webhookSecretOf(deps, row.orgId),
    type: `cdn.video.merge.${row.status}`,
    data: job,
  });
}

/** Re-checks the inputs (an asset may have gone since creation) and copies them next to the output. */
async function planMerge(
  deps: Deps,
  s: { orgId: string; environment: 'production' | 'sandbox' },
  body: MergeBody,
  dir: string,
): Promise<MergePlan> {
  const ids = [
    ...new Set([...body.inputs.map((i) => i.assetId), ...(body.audioTrack ? [body.audioTrack.assetId] : [])]),
  ];
  const rows = await deps.db.orm
    .select()
    .from(cdnAssets)
    .where(and(tenantOf(s), inArray(cdnAssets.id, ids)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const files = new Map<string, string>();
  const local = async (id: string) => {
    const known = files.get(id);
    if (known) return known;
    const file = await copyBlobTo(deps.blobs, byId.get(id)!.blobKey, dir);
    if (!file) throw new Error(`The bytes of asset ${id} are missing.`);
    files.set(id, file);
    return file;
  };
  const segments: MergePlan['segments'] = [];
  for (const [i, given] of body.inputs.entries()) {
    const problem = inputProblem(i, byId.get(given.assetId), given);
    if (problem) throw new Error(problem);
    const a = byId.get(given.assetId)!;
    if (a.type === 'image') {
      segments.push({ file: await local(a.id), kind: 'image', duration: given.duration!, hasAudio: false });
    } else {
      const start = given.startTime ?? 0;
      const end = Math.min(
        given.endTime ?? a.duration ?? Number.POSITIVE_INFINITY,
        a.duration ?? Number.POSITIVE_INFINITY,
      );
      const duration = end - start;
      if (!Number.isFinite(duration) || duration <= 0)
        throw new Error(`inputs[${i}]: nothing left after trimming.`);
      segments.push({
        file: await local(a.id),
        kind: 'video',
        start,
        duration,
        hasAudio: !!a.media?.hasAudio,
      });
    }
  }
  const firstVisual = byId.get(body.inputs[0]!.assetId)!;
  const frame = frameSize(
    QUALITY_SHORT_EDGE[body.output.quality],
    body.output.aspectRatio,
    firstVisual.width && firstVisual.height
      ? { width: firstVisual.width, height: firstVisual.height }
      : undefined,
  );
  let soundtrack: MergePlan['soundtrack'];
  if (body.audioTrack) {
    const a = byId.get(body.audioTrack.assetId);
    if (!a?.media?.hasAudio) throw new Error('audioTrack: the asset must contain an audio stream.');
    soundtrack = {
      file: await local(a.id),
      loop: body.audioTrack.loop,
      fadeIn: body.audioTrack.fadeIn,
      fadeOut: body.audioTrack.fadeOut,
    };
  }
  return {
    segments,
    soundtrack,
    format: body.output.format,
    ...frame,
    out: path.join(dir, `out.${body.output.format}`),
  };
}
