import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../core/db/client.ts';
import { perObject } from '../../core/per-object.ts';
import type { Deps } from '../../deps.ts';
import type { AssetRow, CdnScope } from './assets.ts';
import { findAsset } from './assets.ts';
import { cdnErrors } from './errors.ts';
import { presetOptions } from './presets.ts';
import { CONTENT_TYPES, chooseFormat, type Format, renderImage } from './render.ts';
import type { TransformOptions, TransformRequestOptions } from './schema.ts';
import { rememberedImage, rememberImage, type SourceImage } from './source-images.ts';
import { cdnAssets, cdnTransformCache } from './tables.ts';
import { canonicalQuery, signTransform } from './transform-query.ts';

// Image transforms: POST /v1/cdn/transform answers a signed URL (`/cdn/t/<assetId>?w=..&sig=..`); the URL is
// rendered by sharp on first use and the result cached in the blob store (cdn-cache/...), one row per variant
// so the cleanup job can expire it after the contract's 90 days. Identical concurrent requests share one
// render inside a process; on PostgreSQL a miss also takes a transaction-scoped advisory lock on the variant
// and looks again, so several nodes render it once (docs/decisions/076-cdn-transform-lock.md).

export const TRANSFORM_CACHE_DAYS = 90;
const CACHE_MS = TRANSFORM_CACHE_DAYS * 86_400_000;

export async function createTransformUrl(
  deps: Deps,
  s: CdnScope,
  assetId: string,
  opts: TransformRequestOptions,
) {
  const row = await findAsset(deps, s, assetId);
  usableImage(row);
  const preset = opts.preset ? await presetOptions(deps, s, opts.preset) : {};
  const mark = opts.watermarkAsset ?? preset.watermarkAsset;
  if (mark) {
    const wm = await findAsset(deps, s, mark).catch(() => null);
    if (wm?.status !== 'ready' || wm.type !== 'image') throw cdnErrors.watermarkInvalid();
  }
  const query = canonicalQuery(opts);
  const base = `${deps.config.publicUrl}/cdn/t/${row.id}?`;
  // A preset alone needs no signature (decision 120); anything else is signed.
  if (opts.preset && Object.keys(opts).length === 1)
    return { url: base + query, assetId: row.id, options: opts };
  const sig = signTransform(deps.keyring, row.id, query);
  return { url: `${base}${query ? `${query}&` : ''}sig=${sig}`, assetId: row.id, options: opts };
}

function usableImage(row: AssetRow): void {
  if (row.status !== 'ready') throw cdnErrors.assetNotReady(row.status);
  if (row.type !== 'image') throw cdnErrors.assetNotImage();
}

export type Rendered = { body: Buffer; contentType: string; cached: boolean; variant: string };

/**
 * One variant being produced in this process. `answer` settles as soon as the bytes exist (rendered or read
 * from the cache); `done` when they are also stored. The entry stays until `done`, so a request arriving
 * between the answer and the cache row joins it instead of rendering again.
 */
type Flight = { answer: Promise<Rendered>; done: Promise<unknown>; rendered?: Rendered };

// Per database handle (one per process in production; two test apps on one database are two nodes).
const inFlightOf = perObject<Db, Map<string, Flight>>(() => new Map());

/** Waits for renditions still being stored after their answer (on shutdown, before the database closes). */
export async function settleTransforms(db: Db): Promise<void> {
  await Promise.allSettled([...inFlightOf(db).values()].map((f) => f.done));
}

/** Counts renders (not cache hits), for tests and the benchmark. */
export const transformStats = { renders: 0 };

/** A transform URL's bytes: from the cache when fresh, else rendered once (coalesced) and cached. */
export async function serveTransform(
  deps: Deps,
  assetId: string,
  opts: TransformOptions,
  accept: string,
): Promise<Rendered> {
  // Known before any query: an asset's type never changes, so the same wish always gives the same format.
  const flightKey = `${assetId}?${canonicalQuery(opts)}|${formatWish(opts, accept)}`;
  const inFlight = inFlightOf(deps.db);
  const joined = inFlight.get(flightKey);
  if (joined) {
    // Already rendered and now being stored: served from memory, as the cache would serve it.
    if (joined.rendered) return { ...joined.rendered, cached: true };
    return joined.answer;
  }
  let answer!: (r: Rendered) => void;
  let fail!: (err: unknown) => void;
  const flight = {
    answer: new Promise<Rendered>((res, rej) => {
      answer = res;
      fail = rej;
    }),
  } as Flight;
  const early = (r: Rendered) => {
    flight.rendered = r;
    answer(r);
  };
  flight.done = produce(deps, assetId, opts, accept, early)
    .then(answer, (err) => {
      if (!flight.rendered) return fail(err);
      // The answer is out; a rendition not stored is only a later re-render.
      deps.log.warn({ err, assetId }, 'cdn: storing a rendered transform failed');
    })
    .finally(() => inFlight.delete(flightKey));
  inFlight.set(flightKey, flight);
  return flight.answer;
}

/** What decides the output format besides the source's own type. */
function formatWish(opts: TransformOptions, accept: string): string {
  if (opts.format !== 'auto') return opts.format ?? 'source';
  if (/image\/avif/.test(accept)) return 'auto-avif';
  if (/image\/webp/.test(accept)) return 'auto-webp';
  return 'auto';
}

const variantOf = (opts: TransformOptions, format: Format) =>
  crypto
    .createHash('sha256')
    .update(`${canonicalQuery(opts)}|${format}`)
    .digest('hex')
    .slice(0, 32);

/** The formats a request may end with before the source's type is known (one unless it decides). */
function candidateFormats(opts: TransformOptions, accept: string): Format[] {
  const wish = formatWish(opts, accept);
  if (wish === 'source') return Object.keys(CONTENT_TYPES) as Format[];
  // An animatable source (GIF, WebP) answers WebP where others answer AVIF.
  if (wish === 'auto-avif') return ['avif', 'webp'];
  if (wish === 'auto-webp') return ['webp'];
  if (wish === 'auto') return ['png', 'jpeg', 'gif'];
  return [wish as Format];
}

/**
 * The asset row and its cache row for these options in one query. The cache key holds the output format,
 * which may follow the source's type: each possible format's key is asked for and the right one picked after.
 */
async function probe(deps: Deps, assetId: string, opts: TransformOptions, accept: string) {
  const files = candidateFormats(opts, accept).map((f) => `${variantOf(opts, f)}.${f}`);
  const keys = files.map(
    (f) => sql`'cdn-cache/' || ${cdnAssets.orgId} || '/' || ${cdnAssets.id} || '/' || ${f}`,
  );
  const rows = await deps.db.orm
    .select({ asset: cdnAssets, key: cdnTransformCache.blobKey, at: cdnTransformCache.createdAt })
    .from(cdnAssets)
    .leftJoin(cdnTransformCache, sql`${cdnTransformCache.blobKey} IN (${sql.join(keys, sql`, `)})`)
    .where(eq(cdnAssets.id, assetId));
  const row = rows[0]?.asset;
  if (!row) throw cdnErrors.assetNotFound();
  return { row, cache: new Map(rows.filter((r) => r.key).map((r) => [r.key!, r.at!])) };
}

/** The variant's bytes: cached, or rendered (handed to `early` at once) and then stored. */
async function produce(
  deps: Deps,
  assetId: string,
  opts: TransformOptions,
  accept: string,
  early: (r: Rendered) => void,
): Promise<Rendered> {
  // On the disk driver a remembered source needs no query: the cache file says whether a rendition exists.
  const known = deps.blobs.localFile ? rememberedImage(deps.db, assetId) : undefined;
  let row: SourceImage;
  let cache: Map<string, Date | string> | undefined;
  if (known) row = known;
  else {
    const probed = await probe(deps, assetId, opts, accept);
    usableImage(probed.row);
    if (deps.blobs.localFile) rememberImage(deps.db, probed.row);
    row = probed.row;
    cache = probed.cache;
  }
  const format = chooseFormat(opts, row.mimeType, accept);
  const variant = variantOf(opts, format);
  const key = `cdn-cache/${row.orgId}/${row.id}/${variant}.${format}`;
  const contentType = CONTENT_TYPES[format];
  const fromCache = async (at: Date | string | undefined) => {
    const body = fresh(deps, at) ? await readBlob(deps, key) : null;
    return body && { body, contentType, cached: true, variant };
  };
  const cachedBody = cache ? (await fromCache(cache.get(key)))?.body : await freshCacheFile(deps, key);
  if (cachedBody) return { body: cachedBody, contentType, cached: true, variant };
  const render = async (): Promise<Rendered> => {
    transformStats.renders++;
    const body = await renderImage(
      deps.blobs.localFile?.(row.blobKey) ?? (await readSource(deps, row)),
      opts,
      format,
      {
        mimeType: row.mimeType,
        watermark: opts.watermarkAsset ? await watermarkSource(deps, row.id, opts.watermarkAsset) : undefined,
      },
    );
    return { body, contentType, cached: false, variant };
  };
  const store = async (q: Queryable, r: Rendered) => {
    // A cached rendition: re-rendered if lost, so not worth an fsync.
    await deps.blobs.put(key, r.body, { contentType, durable: false });
    await q.query(
      `INSERT INTO cdn_transform_cache (blob_key, asset_id, org_id, content_type, size, created_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (blob_key) DO UPDATE SET created_at = EXCLUDED.created_at, size = EXCLUDED.size`,
      [key, row.id, row.orgId, contentType, r.body.length, deps.clock.now().toISOString()],
    );
    return r;
  };
  if (deps.db.kind !== 'postgres') {
    const r = await render();
    early(r);
    return store(deps.db, r);
  }
  // Another node may be rendering the same variant: whoever holds the lock renders and records it before
  // committing (the answer goes out before that); the others wait for the lock, then find its row.
  // Everything inside runs on the transaction's own connection (a pool query here could wait for a
  // connection this lock holds).
  return deps.db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
    const { rows } = await tx.query<{ created_at: Date | string }>(
      'SELECT created_at FROM cdn_transform_cache WHERE blob_key = $1',
      [key],
    );
    const now = await fromCache(rows[0]?.created_at);
    if (now) return now;
    const r = await render();
    early(r);
    return store(tx, r);
  });
}

/** The watermark image, found only in the tenant of the asset it marks. */
async function watermarkSource(deps: Deps, assetId: string, markId: string): Promise<Buffer | string> {
  const { rows } = await deps.db.query<{ blob_key: string }>(
    `SELECT w.blob_key FROM cdn_assets w JOIN cdn_assets s
       ON s.org_id = w.org_id AND s.environment = w.environment
     WHERE s.id = $1 AND w.id = $2 AND w.status = 'ready' AND w.type = 'image'`,
    [assetId, markId],
  );
  const key = rows[0]?.blob_key;
  if (!key) throw cdnErrors.watermarkInvalid();
  const local = deps.blobs.localFile?.(key);
  if (local) return local;
  const body = await readBlob(deps, key);
  if (!body) throw cdnErrors.watermarkInvalid();
  return body;
}

/** A cached rendition found by its file (disk driver), served only while its row says it is fresh. */
async function freshCacheFile(deps: Deps, key: string): Promise<Buffer | null> {
  const body = await readBlob(deps, key);
  if (!body) return null;
  const [hit] = await deps.db.orm
    .select({ at: cdnTransformCache.createdAt })
    .from(cdnTransformCache)
    .where(eq(cdnTransformCache.blobKey, key));
  return fresh(deps, hit?.at) ? body : null;
}

function fresh(deps: Deps, at: Date | string | undefined): boolean {
  return at !== undefined && new Date(at).getTime() + CACHE_MS > deps.clock.now().getTime();
}

/** A stored object's bytes, or null when it is gone; a local file is read whole, without a stream. */
async function readBlob(deps: Deps, key: string): Promise<Buffer | null> {
  const file = deps.blobs.localFile?.(key);
  if (file) {
    return fsp.readFile(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      throw err;
    });
  }
  const obj = await deps.blobs.get(key);
  return obj ? buffer(obj.body) : null;
}

async function readSource(deps: Deps, row: SourceImage): Promise<Buffer> {
  const body = await readBlob(deps, row.blobKey);
  if (!body) throw cdnErrors.assetNotFound();
  return body;
}

/** Removes cached variants older than 90 days (rows and bytes); returns how many. */
export async function expireTransformCache(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - CACHE_MS);
  const gone = await deps.db.orm
    .delete(cdnTransformCache)
    .where(and(lt(cdnTransformCache.createdAt, cutoff)))
    .returning({ blobKey: cdnTransformCache.blobKey });
  await Promise.allSettled(gone.map((g) => deps.blobs.delete(g.blobKey)));
  return gone.length;
}
