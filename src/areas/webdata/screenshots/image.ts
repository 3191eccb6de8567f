import { and, eq } from 'drizzle-orm';
import type { Deps } from '../../../deps.ts';
import { readAssetBytes } from '../../cdn/index.ts';
import type { Scope } from './screenshots.ts';
import { webdataScreenshots as shots } from './tables.ts';

/** The image of the caller's completed screenshot, from the CDN (null when it has none). */
export async function readScreenshotImage(deps: Deps, s: Scope, id: string): Promise<Buffer | null> {
  const [row] = await deps.db.orm
    .select({ assetId: shots.assetId })
    .from(shots)
    .where(and(eq(shots.orgId, s.orgId), eq(shots.environment, s.environment), eq(shots.id, id)));
  return row?.assetId ? readAssetBytes(deps, s, row.assetId) : null;
}
