import { buffer } from 'node:stream/consumers';
import { and, asc, count, desc, eq, ilike, inArray, type SQL } from 'drizzle-orm';
import type { Environment } from '../../core/auth/caller.ts';

import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { projects } from '../orgs/index.ts';
import { cdnErrors } from './errors.ts';
import type { AssetOut, ListQuery } from './schema.ts';
import { forgetImages } from './source-images.ts';
import { type AssetRow, cdnAssets, cdnTransformCache } from './tables.ts';

// Reading and managing assets: get, list, patch, delete (one or many), move. Every query is scoped to the
// caller's organization and environment; another tenant's asset is simply not found.

export type CdnScope = { orgId: string; environment: Environment };
export type { AssetRow };

export const tenantOf = (s: CdnScope) =>
  and(eq(cdnAssets.orgId, s.orgId), eq(cdnAssets.environment, s.environment));

/** The public delivery URL of an asset (served by Pier under /cdn on both drivers). */
export function cdnUrlOf(deps: Deps, id: string, filename: string): string {
  return `${deps.config.publicUrl}/cdn/${id}/${urlSegmentOf(filename)}`;
}

/**
 * The filename as the URL's last segment. A name of dots only ('.', '..') would be resolved away by every
 * URL parser (`%2E%2E` too, in WHATWG URLs), leaving `/cdn/` or `/cdn/<id>/`: it gets a leading '_'.
 * Delivery finds the asset by its id, so the segment is only what a saved file is named.
 */
export function urlSegmentOf(filename: string): string {
  return encodeURIComponent(/^\.+$/.test(filename) ? `_${filename}` : filename);
}

export function toAssetOut(deps: Deps, r: AssetRow, projectSlug: string | null = null): AssetOut {
  return {
    assetId: r.id,
    filename: r.filename,
    folder: r.folder,
    mimeType: r.mimeType,
    declaredMimeType: r.declaredMimeType,
    type: r.type,
    size: r.size,
    status: r.status,
    error: r.error,
    width: r.width,
    height: r.height,
    duration: r.duration,
    frames: r.frames,
    placeholder: r.placeholder,
    videoCodec: r.media?.videoCodec ?? null,
    audioCodec: r.media?.audioCodec ?? null,
    metadata: r.metadata,
    projectSlug,
    cdnUrl: cdnUrlOf(deps, r.id, r.filename),
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    confirmedAt: r.confirmedAt?.toISOString() ?? null,
  };
}

async function slugsOf(deps: Deps, rows: AssetRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.map((r) => r.projectId).filter((x): x is string => !!x))];
  if (ids.length === 0) return new Map();
  const found = await deps.db.orm
    .select({ id: projects.id, slug: projects.slug })
    .from(projects)
    .where(inArray(projects.id, ids));
  return new Map(found.map((p) => [p.id, p.slug]));
}

export async function toAssetOuts(deps: Deps, rows: AssetRow[]): Promise<AssetOut[]> {
  const slugs = await slugsOf(deps, rows);
  return rows.map((r) => toAssetOut(deps, r, r.projectId ? (slugs.get(r.projectId) ?? null) : null));
}

/** The caller's asset, or ASSET_NOT_FOUND (malformed ids, other tenants and missing ones alike). */
export async function findAsset(deps: Deps, s: CdnScope, id: string): Promise<AssetRow> {
  if (!isUuid(id)) throw cdnErrors.assetNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(cdnAssets)
    .where(and(tenantOf(s), eq(cdnAssets.id, id)));
  if (!row) throw cdnErrors.assetNotFound();
  return row;
}

export async function getAsset(deps: Deps, s: CdnScope, id: string): Promise<AssetOut> {
  const [out] = await toAssetOuts(deps, [await findAsset(deps, s, id)]);
  return out!;
}

export async function listAssets(deps: Deps, s: CdnScope, q: ListQuery) {
  const where: SQL[] = [tenantOf(s)!];
  if (q.folder !== undefined) where.push(eq(cdnAssets.folder, q.folder));
  if (q.type) where.push(eq(cdnAssets.type, q.type));
  if (q.search) where.push(ilike(cdnAssets.filename, `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
  const col = { createdAt: cdnAssets.createdAt, filename: cdnAssets.filename, size: cdnAssets.size }[
    q.sortBy
  ];
  const dir = q.sortOrder === 'asc' ? asc : desc;
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select()
      .from(cdnAssets)
      .where(and(...where))
      .orderBy(dir(col), dir(cdnAssets.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm
      .select({ n: count() })
      .from(cdnAssets)
      .where(and(...where)),
  ]);
  return offsetPage(await toAssetOuts(deps, rows), total?.n ?? 0, q);
}

/** The folders holding the caller's assets, for the dashboard's filter (at most 500, sorted). */
export async function listFolders(deps: Deps, s: CdnScope): Promise<string[]> {
  const rows = await deps.db.orm
    .selectDistinct({ folder: cdnAssets.folder })
    .from(cdnAssets)
    .where(tenantOf(s))
    .orderBy(asc(cdnAssets.folder))
    .limit(500);
  return rows.map((r) => r.folder);
}

export async function patchAsset(
  deps: Deps,
  s: CdnScope,
  id: string,
  body: { metadata?: Record<string, unknown>; filename?: string; folder?: string },
): Promise<AssetOut> {
  await findAsset(deps, s, id);
  const [row] = await deps.db.orm
    .update(cdnAssets)
    .set({ ...body, updatedAt: deps.clock.now() })
    .where(and(tenantOf(s), eq(cdnAssets.id, id)))
    .returning();
  if (!row) throw cdnErrors.assetNotFound();
  const [out] = await toAssetOuts(deps, [row]);
  return out!;
}

/** Where an upload's PUT lands: beside the asset's key, under a prefix nothing delivers from. */
export function uploadKeyOf(blobKey: string): string {
  return blobKey.replace(/^cdn\//, 'cdn-upload/');
}

/** Removes the rows first (so the asset disappears at once), then its bytes and cached variants. */
async function removeRows(deps: Deps, s: CdnScope, ids: string[]): Promise<string[]> {
  const valid = ids.filter((id) => isUuid(id));
  if (valid.length === 0) return [];
  const gone = await deps.db.orm
    .delete(cdnAssets)
    .where(and(tenantOf(s), inArray(cdnAssets.id, valid)))
    .returning({ id: cdnAssets.id, blobKey: cdnAssets.blobKey, chunks: cdnAssets.uploadChunks });
  if (gone.length === 0) return [];
  forgetImages(
    deps.db,
    gone.map((g) => g.id),
  );
  const variants = await deps.db.orm
    .delete(cdnTransformCache)
    .where(
      inArray(
        cdnTransformCache.assetId,
        gone.map((g) => g.id),
      ),
    )
    .returning({ blobKey: cdnTransformCache.blobKey });
  const keys = [
    ...gone.flatMap((g) => [g.blobKey, uploadKeyOf(g.blobKey), ...(g.chunks ?? []).map((c) => c.key)]),
    ...variants.map((v) => v.blobKey),
  ];
  // Best effort: a blob left behind by a crash here is unreachable (no row points at it).
  await Promise.allSettled(keys.map((k) => deps.blobs.delete(k)));
  return gone.map((g) => g.id);
}

export async function deleteAsset(deps: Deps, s: CdnScope, id: string): Promise<{ success: true }> {
  const gone = await removeRows(deps, s, [id]);
  if (gone.length === 0) throw cdnErrors.assetNotFound();
  return { success: true };
}

export async function deleteAssets(deps: Deps, s: CdnScope, ids: string[]) {
  const unique = [...new Set(ids)];
  const gone = new Set(await removeRows(deps, s, unique));
  return { success: true as const, deleted: gone.size, notFound: unique.filter((id) => !gone.has(id)) };
}

export async function moveAssets(deps: Deps, s: CdnScope, ids: string[], folder: string) {
  const unique = [...new Set(ids)];
  const valid = unique.filter((id) => isUuid(id));
  const moved =
    valid.length === 0
      ? []
      : await deps.db.orm
          .update(cdnAssets)
          .set({ folder, updatedAt: deps.clock.now() })
          .where(and(tenantOf(s), inArray(cdnAssets.id, valid)))
          .returning({ id: cdnAssets.id });
  const done = new Set(moved.map((m) => m.id));
  return { success: true as const, moved: done.size, notFound: unique.filter((id) => !done.has(id)) };
}

/** The stored bytes of the caller's asset (web data compares a scheduled screenshot with the previous one). */
export async function readAssetBytes(deps: Deps, s: CdnScope, id: string): Promise<Buffer> {
  const row = await findAsset(deps, s, id);
  const obj = await deps.blobs.get(row.blobKey);
  if (!obj) throw cdnErrors.assetNotFound();
  return buffer(obj.body);
}
