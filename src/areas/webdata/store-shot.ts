import type { Environment } from '../../core/auth/caller.ts';
import type { Deps } from '../../deps.ts';
import { storeAsset } from '../cdn/index.ts';
import type { ExtractionShot } from './tables.ts';

/** A PNG taken with a page (an extraction's or a crawl page's screenshot format), stored on the CDN. */
export async function storeShot(
  deps: Deps,
  owner: { orgId: string; environment: string },
  shot: { bytes: Buffer; width: number; height: number; truncated: boolean },
  file: { name: string; folder: string; metadata: Record<string, unknown> },
): Promise<ExtractionShot> {
  const asset = await storeAsset(deps, {
    orgId: owner.orgId,
    environment: owner.environment as Environment,
    bytes: shot.bytes,
    filename: file.name,
    mimeType: 'image/png',
    folder: file.folder,
    origin: 'derived',
    metadata: file.metadata,
  });
  const { width, height, truncated } = shot;
  return { assetId: asset.assetId, url: asset.cdnUrl, width, height, truncated };
}
