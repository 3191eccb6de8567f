import { and, count, desc, eq, inArray, type SQL } from 'drizzle-orm';

import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { projectForApiKey, projects } from '../orgs/index.ts';
import { type AssetRow, type CdnScope, cdnUrlOf, tenantOf } from './assets.ts';
import { cdnErrors } from './errors.ts';
import type { MergeBody, MergeJobOut } from './schema.ts';
import { cdnAssets, cdnMergeJobs, type MERGE_STATUSES } from './tables.ts';

// Video merges: creation checks every input against what confirm learnt of its bytes (so a "video" that is
// really a still image or audio-only is a 400 before anything runs), then queues `cdn.video.merge` (jobs.ts
// runs ffmpeg). Cancel marks the row; the running job sees it and kills ffmpeg (merge-run.ts).

export const MERGE_JOB = 'cdn.video.merge';
type MergeRow = typeof cdnMergeJobs.$inferSelect;

const mergeTenant = (s: CdnScope) =>
  and(eq(cdnMergeJobs.orgId, s.orgId), eq(cdnMergeJobs.environment, s.environment));

/** Why an asset cannot be the i-th merge input, or null when it can. */
export function inputProblem(
  i: number,
  a: AssetRow | undefined,
  given: MergeBody['inputs'][number],
): string | null {
  const at = `inputs[${i}]`;
  if (!a) return `${at}: asset ${given.assetId} was not found.`;
  if (a.status !== 'ready') return `${at}: asset ${a.id} is ${a.status}${a.error ? ` (${a.error})` : ''}.`;
  const labelledVideo = a.declaredMimeType.startsWith('video/');
  if (a.type === 'audio' || (a.type === 'video' && a.media && !a.media.hasVideo)) {
    return `${at}: '${a.filename}' is audio-only (${a.mimeType}); use it as audioTrack instead.`;
  }
  if (labelledVideo && a.type === 'image') {
    return `${at}: '${a.filename}' was uploaded as ${a.declaredMimeType} but its bytes are a still image (${a.mimeType}).`;
  }
  if (a.type === 'video' && a.media?.stillImage)
    return `${at}: '${a.filename}' holds a still image, not a video.`;
  if (a.type !== 'video' && a.type !== 'image')
    return `${at}: '${a.filename}' is ${a.type}, not a video or an image.`;
  if (a.type === 'image') {
    if (given.duration === undefined) return `${at}: images need a duration in seconds (at most 3600).`;
    if (given.startTime !== undefined || given.endTime !== undefined) {
      return `${at}: startTime and endTime are trim points of videos only.`;
    }
  }
  if (
    a.type === 'video' &&
    a.duration !== null &&
    given.startTime !== undefined &&
    given.startTime >= a.duration
  ) {
    return `${at}: startTime ${given.startTime} is past the video's end (${a.duration} s).`;
  }
  return null;
}

export async function createMerge(deps: Deps, s: CdnScope, body: MergeBody): Promise<MergeJobOut> {
  const project = await projectForApiKey(deps, s.orgId, body.projectSlug);
  const ids = [
    ...new Set([...body.inputs.map((i) => i.assetId), ...(body.audioTrack ? [body.audioTrack.assetId] : [])]),
  ];
  const rows = await deps.db.orm
    .select()
    .from(cdnAssets)
    .where(and(tenantOf(s), inArray(cdnAssets.id, ids)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const [i, given] of body.inputs.entries()) {
    const problem = inputProblem(i, byId.get(given.assetId), given);
    if (problem) throw cdnErrors.mergeInputInvalid(problem);
  }
  if (body.audioTrack) {
    const a = byId.get(body.audioTrack.assetId);
    if (!a) throw cdnErrors.mergeInputInvalid(`audioTrack: asset ${body.audioTrack.assetId} was not found.`);
    if (a.status !== 'ready' || !a.media?.hasAudio) {
      throw cdnErrors.mergeInputInvalid(`audioTrack: '${a.filename}' must contain an audio stream.`);
    }
  }
  const now = deps.clock.now();
  const [row] = await deps.db.orm
    .insert(cdnMergeJobs)
    .values({
      orgId: s.orgId,
      environment: s.environment,
      projectId: project.id,
      status: 'pending',
      request: body as unknown as Record<string, unknown>,
      webhookUrl: body.webhookUrl ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  await deps.jobs.enqueue(MERGE_JOB, { mergeId: row!.id });
  // Only a job still pending becomes queued: the worker may already be processing it.
  const [queued] = await deps.db.orm
    .update(cdnMergeJobs)
    .set({ status: 'queued', updatedAt: deps.clock.now() })
    .where(and(eq(cdnMergeJobs.id, row!.id), eq(cdnMergeJobs.status, 'pending')))
    .returning();
  return (await toMergeOuts(deps, [queued ?? row!]))[0]!;
}

export async function toMergeOuts(deps: Deps, rows: MergeRow[]): Promise<MergeJobOut[]> {
  if (rows.length === 0) return [];
  const projectIds = [...new Set(rows.map((r) => r.projectId))];
  const outIds = rows.map((r) => r.outputAssetId).filter((x): x is string => !!x);
  const [prj, outs] = await Promise.all([
    deps.db.orm
      .select({ id: projects.id, slug: projects.slug })
      .from(projects)
      .where(inArray(projects.id, projectIds)),
    outIds.length
      ? deps.db.orm.select().from(cdnAssets).where(inArray(cdnAssets.id, outIds))
      : Promise.resolve([] as AssetRow[]),
  ]);
  const slug = new Map(prj.map((p) => [p.id, p.slug]));
  const out = new Map(outs.map((o) => [o.id, o]));
  return rows.map((r) => {
    const o = r.outputAssetId ? out.get(r.outputAssetId) : undefined;
    return {
      id: r.id,
      status: r.status,
      progress: r.progress,
      projectSlug: slug.get(r.projectId) ?? '',
      outputAsset: o
        ? { assetId: o.id, cdnUrl: cdnUrlOf(deps, o.id, o.filename), duration: o.duration, size: o.size }
        : null,
      error: r.error,
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
      completedAt: r.completedAt?.toISOString() ?? null,
    };
  });
}

async function findMerge(deps: Deps, s: CdnScope, id: string): Promise<MergeRow> {
  if (!isUuid(id)) throw cdnErrors.mergeJobNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(cdnMergeJobs)
    .where(and(mergeTenant(s), eq(cdnMergeJobs.id, id)));
  if (!row) throw cdnErrors.mergeJobNotFound();
  return row;
}

export async function getMerge(deps: Deps, s: CdnScope, id: string): Promise<MergeJobOut> {
  return (await toMergeOuts(deps, [await findMerge(deps, s, id)]))[0]!;
}

export async function listMerges(
  deps: Deps,
  s: CdnScope,
  // v1 always names a project; the dashboard may list the whole environment.
  q: { projectSlug?: string; status?: (typeof MERGE_STATUSES)[number]; limit: number; offset: number },
) {
  const where: SQL[] = [mergeTenant(s)!];
  if (q.projectSlug)
    where.push(eq(cdnMergeJobs.projectId, (await projectForApiKey(deps, s.orgId, q.projectSlug)).id));
  if (q.status) where.push(eq(cdnMergeJobs.status, q.status));
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select()
      .from(cdnMergeJobs)
      .where(and(...where))
      .orderBy(desc(cdnMergeJobs.createdAt), desc(cdnMergeJobs.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm
      .select({ n: count() })
      .from(cdnMergeJobs)
      .where(and(...where)),
  ]);
  return offsetPage(await toMergeOuts(deps, rows), total?.n ?? 0, q);
}

const CANCELLABLE = ['pending', 'queued', 'processing'] as const;

export async function cancelMerge(deps: Deps, s: CdnScope, id: string): Promise<MergeJobOut> {
  const row = await findMerge(deps, s, id);
  const now = deps.clock.now();
  const [done] = await deps.db.orm
    .update(cdnMergeJobs)
    .set({ status: 'cancelled', updatedAt: now, completedAt: now })
    .where(and(mergeTenant(s), eq(cdnMergeJobs.id, id), inArray(cdnMergeJobs.status, [...CANCELLABLE])))
    .returning();
  if (!done) throw cdnErrors.mergeNotCancellable(row.status);
  return (await toMergeOuts(deps, [done]))[0]!;
}
