import { and, eq, inArray } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { type CdnScope, findAsset, toAssetOuts } from './assets.ts';
import { cdnErrors } from './errors.ts';
import type { VideoJobBody, VideoJobOut } from './schema.ts';
import { cdnAssets, cdnVideoJobs } from './tables.ts';

// Poster frames, thumbnails at a time offset, animated previews and HLS renditions of a video asset, each a
// job (`cdn.video.rendition`) whose row carries status and progress, like merges. The output is a derived
// asset of the same tenant (counted under `breakdown.derived` in storage usage).

export const VIDEO_JOB = 'cdn.video.rendition';
type JobRow = typeof cdnVideoJobs.$inferSelect;

export async function createVideoJob(deps: Deps, s: CdnScope, body: VideoJobBody): Promise<VideoJobOut> {
  const asset = await findAsset(deps, s, body.assetId);
  if (asset.status !== 'ready' || asset.type !== 'video' || !asset.media?.hasVideo)
    throw cdnErrors.assetNotVideo();
  const now = deps.clock.now();
  const [row] = await deps.db.orm
    .insert(cdnVideoJobs)
    .values({
      ...s,
      assetId: asset.id,
      kind: body.kind,
      request: body as unknown as Record<string, unknown>,
      status: 'queued',
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  await deps.jobs.enqueue(VIDEO_JOB, { jobId: row!.id });
  return (await toVideoJobOuts(deps, [row!]))[0]!;
}

export async function getVideoJob(deps: Deps, s: CdnScope, id: string): Promise<VideoJobOut> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw cdnErrors.videoJobNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(cdnVideoJobs)
    .where(
      and(
        eq(cdnVideoJobs.orgId, s.orgId),
        eq(cdnVideoJobs.environment, s.environment),
        eq(cdnVideoJobs.id, id),
      ),
    );
  if (!row) throw cdnErrors.videoJobNotFound();
  return (await toVideoJobOuts(deps, [row]))[0]!;
}

async function toVideoJobOuts(deps: Deps, rows: JobRow[]): Promise<VideoJobOut[]> {
  const ids = rows.map((r) => r.outputAssetId).filter((x): x is string => !!x);
  const outs = ids.length
    ? await toAssetOuts(deps, await deps.db.orm.select().from(cdnAssets).where(inArray(cdnAssets.id, ids)))
    : [];
  const byId = new Map(outs.map((o) => [o.assetId, o]));
  return rows.map((r) => {
    const o = r.outputAssetId ? byId.get(r.outputAssetId) : undefined;
    return {
      id: r.id,
      assetId: r.assetId,
      kind: r.kind,
      status: r.status,
      progress: r.progress,
      outputAsset: o ? { assetId: o.assetId, cdnUrl: o.cdnUrl, mimeType: o.mimeType, size: o.size } : null,
      error: r.error,
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
      completedAt: r.completedAt?.toISOString() ?? null,
    };
  });
}
