import type { Db } from '../../core/db/client.ts';
import { perObject } from '../../core/per-object.ts';
import type { AssetRow } from './tables.ts';

// What a transform needs to know about its source image, remembered per process so a miss on the disk driver
// asks the database nothing before rendering (docs/decisions/089-cdn-transform-source-memo.md). Sound because
// an asset's bytes, type and storage key never change once it is ready (a new upload is a new id; a move only
// changes the folder). Deleting on this node forgets at once; on another node an entry lives at most TTL_MS,
// and meanwhile a render of a deleted asset finds its original gone and answers 404 as before.

export type SourceImage = Pick<AssetRow, 'id' | 'orgId' | 'blobKey' | 'mimeType'>;

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

type Entry = { image: SourceImage; until: number };

// Per database handle, like the in-flight renders: two test apps on one database act as two nodes.
const entriesOf = perObject<Db, Map<string, Entry>>(() => new Map());

export function rememberedImage(db: Db, id: string): SourceImage | undefined {
  const m = entriesOf(db);
  const e = m.get(id);
  if (!e) return undefined;
  if (e.until > performance.now()) return e.image;
  m.delete(id);
  return undefined;
}

/** Only ready images are remembered; the caller has checked. */
export function rememberImage(db: Db, row: SourceImage): void {
  const m = entriesOf(db);
  // Oldest first out: insertion order is also expiry order.
  if (m.size >= MAX_ENTRIES) m.delete(m.keys().next().value!);
  const { id, orgId, blobKey, mimeType } = row;
  m.set(id, { image: { id, orgId, blobKey, mimeType }, until: performance.now() + TTL_MS });
}

export function forgetImages(db: Db, ids: readonly string[]): void {
  const m = entriesOf(db);
  for (const id of ids) m.delete(id);
}
