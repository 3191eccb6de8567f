import { and, eq, like, ne, or, type SQL, sql } from 'drizzle-orm';
import type { Environment } from '../../core/auth/caller.ts';
import type { Deps } from '../../deps.ts';
import { projectForApiKey } from '../orgs/index.ts';
import { cdnAssets } from './tables.ts';

// Storage usage as the contract reports it: every stored object of the organization (both environments
// unless one is named), split by asset type and into originals (uploads) and derived objects (merge
// outputs and other renditions Pier stored as assets). The on-the-fly transform cache is not counted.
// Pending uploads are not counted: until confirm their bytes are unverified. Every derived object Pier
// makes is an asset row with its measured size, so unmeasuredAssets is 0.

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[i]}`;
}

const stat = (bytes: number, objectCount: number) => ({
  bytes,
  bytesFormatted: formatBytes(bytes),
  objectCount,
});

export async function storageUsage(
  deps: Deps,
  orgId: string,
  q: { projectSlug?: string; folder?: string; environment?: Environment },
) {
  const where: SQL[] = [eq(cdnAssets.orgId, orgId), ne(cdnAssets.status, 'pending')];
  if (q.environment) where.push(eq(cdnAssets.environment, q.environment));
  if (q.projectSlug)
    where.push(eq(cdnAssets.projectId, (await projectForApiKey(deps, orgId, q.projectSlug)).id));
  if (q.folder) {
    const nested = `${q.folder.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`;
    where.push(or(eq(cdnAssets.folder, q.folder), like(cdnAssets.folder, nested))!);
  }
  const rows = await deps.db.orm
    .select({
      type: cdnAssets.type,
      origin: cdnAssets.origin,
      bytes: sql<string>`coalesce(sum(${cdnAssets.size}), 0)`,
      n: sql<number>`count(*)::int`,
    })
    .from(cdnAssets)
    .where(and(...where))
    .groupBy(cdnAssets.type, cdnAssets.origin);
  const byType: Record<string, { bytes: number; objectCount: number }> = {};
  const split = { upload: { bytes: 0, objectCount: 0 }, derived: { bytes: 0, objectCount: 0 } };
  for (const r of rows) {
    const bytes = Number(r.bytes);
    const t = byType[r.type] ?? { bytes: 0, objectCount: 0 };
    byType[r.type] = t;
    t.bytes += bytes;
    t.objectCount += r.n;
    split[r.origin].bytes += bytes;
    split[r.origin].objectCount += r.n;
  }
  const totalBytes = split.upload.bytes + split.derived.bytes;
  return {
    totalBytes,
    totalFormatted: formatBytes(totalBytes),
    objectCount: split.upload.objectCount + split.derived.objectCount,
    byType: Object.fromEntries(Object.entries(byType).map(([k, v]) => [k, stat(v.bytes, v.objectCount)])),
    breakdown: {
      originals: stat(split.upload.bytes, split.upload.objectCount),
      derived: stat(split.derived.bytes, split.derived.objectCount),
    },
    unmeasuredAssets: 0,
    folder: q.folder ?? null,
    projectSlug: q.projectSlug ?? null,
    environment: q.environment ?? null,
  };
}
