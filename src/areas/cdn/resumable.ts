import crypto from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { and, eq, sql } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUuid } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import { type AssetRow, uploadKeyOf } from './assets.ts';
import { cdnErrors } from './errors.ts';
import { MAX_RESUMABLE_BYTES } from './schema.ts';
import { cdnAssets, type UploadChunk } from './tables.ts';

// Resumable uploads: the tus 1.0 core protocol (HEAD for the offset, PATCH to append) with the termination
// and expiration extensions, on `{base}/cdn/tus/<assetId>?t=<token>`, the same on the disk and S3 drivers.
// Creation is Pier's own `POST /v1/cdn/upload {resumable: true}` (the app's server holds the API key and
// hands the URL to the browser, as with presigned PUTs). Each PATCH is stored as a piece in the blob store
// (what arrived before a cut connection included), recorded on the row only if the offset is still the one
// the PATCH started from; confirm joins the pieces into the upload key and goes on as for a PUT, so a
// completed or confirmed upload can never be written again (decision 139).

export const TUS_VERSION = '1.0.0';
/** Resumable URLs stay valid longer than a PUT's hour: a large file over a slow link, resumed tomorrow. */
export const RESUMABLE_TTL_SEC = 24 * 3600;
const OFFSET_TYPE = 'application/offset+octet-stream';
const TUS_EXPOSED =
  'Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Upload-Offset, Upload-Length, Upload-Expires';

const tokenOf = (deps: Deps, id: string) => deps.keyring.sign(`cdn-tus\n${id}`);

export function resumableUrl(deps: Deps, id: string): string {
  return `${deps.config.publicUrl}/cdn/tus/${id}?t=${tokenOf(deps, id)}`;
}

type TusReq = FastifyRequest<{ Params: { id: string }; Querystring: { t?: string } }>;

/** The pending resumable upload a URL names; a wrong token is the same 404 as no upload. */
async function uploadOf(deps: Deps, req: TusReq): Promise<AssetRow> {
  const { id } = req.params;
  const t = req.query.t;
  if (!isUuid(id) || typeof t !== 'string' || !deps.keyring.verify(`cdn-tus\n${id}`, t))
    throw cdnErrors.assetNotFound();
  const [row] = await deps.db.orm.select().from(cdnAssets).where(eq(cdnAssets.id, id));
  if (!row || row.uploadOffset === null) throw cdnErrors.assetNotFound();
  if (row.status !== 'pending') throw cdnErrors.uploadAlreadyConfirmed();
  if (row.uploadExpiresAt && row.uploadExpiresAt.getTime() <= deps.clock.now().getTime())
    throw cdnErrors.resumableExpired();
  return row;
}

function describe(reply: FastifyReply, row: AssetRow, offset = row.uploadOffset ?? 0): void {
  reply.header('upload-offset', String(offset));
  reply.header('upload-length', String(row.size));
  if (row.uploadExpiresAt) reply.header('upload-expires', row.uploadExpiresAt.toUTCString());
}

/** HEAD, PATCH, DELETE and OPTIONS on `/cdn/tus/:id`, inside the delivery plugin (its CORS hook applies). */
export function resumableRoutes(app: FastifyInstance, deps: Deps): void {
  // The body is streamed to the blob store by the handler, never parsed or buffered.
  app.addContentTypeParser(OFFSET_TYPE, (_req, _payload, done) => done(null));
  app.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/cdn/tus/')) return;
    reply.header('tus-resumable', TUS_VERSION);
    reply.header('cache-control', 'no-store');
    if (reply.getHeader('access-control-allow-origin'))
      reply.header('access-control-expose-headers', TUS_EXPOSED);
  });

  app.options('/cdn/tus/:id', async (req: TusReq, reply) => {
    reply.header('tus-version', TUS_VERSION);
    reply.header('tus-extension', 'termination,expiration');
    reply.header('tus-max-size', String(MAX_RESUMABLE_BYTES));
    if (reply.getHeader('access-control-allow-origin')) {
      reply.header('access-control-allow-methods', 'HEAD, PATCH, DELETE, OPTIONS');
      const asked = req.headers['access-control-request-headers'];
      if (typeof asked === 'string' && asked) reply.header('access-control-allow-headers', asked);
      reply.header('access-control-max-age', '86400');
    }
    return reply.status(204).send();
  });

  app.head('/cdn/tus/:id', async (req: TusReq, reply) => {
    describe(reply, await uploadOf(deps, req));
    return reply.status(200).send();
  });

  app.delete('/cdn/tus/:id', async (req: TusReq, reply) => {
    const row = await uploadOf(deps, req);
    const [gone] = await deps.db.orm
      .delete(cdnAssets)
      .where(and(eq(cdnAssets.id, row.id), eq(cdnAssets.status, 'pending')))
      .returning();
    if (gone) await deleteChunks(deps, gone.uploadChunks);
    return reply.status(204).send();
  });

  app.patch('/cdn/tus/:id', async (req: TusReq, reply) => {
    if (req.headers['tus-resumable'] !== TUS_VERSION) {
      reply.header('tus-version', TUS_VERSION);
      throw cdnErrors.tusVersion();
    }
    if (req.headers['content-type'] !== OFFSET_TYPE) throw cdnErrors.tusContentType();
    const claimed = Number(req.headers['upload-offset']);
    if (!/^\d+$/.test(String(req.headers['upload-offset'] ?? '')) || !Number.isSafeInteger(claimed))
      throw cdnErrors.tusOffsetMissing();
    const row = await uploadOf(deps, req);
    const offset = row.uploadOffset ?? 0;
    // A complete upload takes nothing more, wherever the PATCH claims to be.
    if (claimed !== offset || offset >= row.size) throw cdnErrors.offsetMismatch(offset, row.size);
    const room = row.size - offset;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > room) {
      reply.header('connection', 'close');
      throw cdnErrors.uploadTooLarge(row.size);
    }
    const added = await storePiece(deps, req, row, offset, room);
    describe(reply, row, offset + added);
    return reply.status(204).send();
  });
}

/** Stores what the PATCH body brings (all of it, or what came before the connection was cut). */
async function storePiece(deps: Deps, req: TusReq, row: AssetRow, offset: number, room: number) {
  const key = `cdn-tus/${row.orgId}/${row.id}/${offset}-${crypto.randomBytes(6).toString('hex')}`;
  const body = new PassThrough();
  // A cut connection ends the piece instead of failing it: tus keeps the bytes that arrived.
  const cut = () => {
    if (!req.raw.complete) body.end();
  };
  req.raw.on('close', cut);
  req.raw.on('error', cut);
  req.raw.pipe(body);
  let size: number;
  try {
    size = (await deps.blobs.put(key, body, { maxBytes: room })).size;
  } catch (err) {
    req.raw.unpipe(body);
    req.raw.resume();
    throw err;
  } finally {
    // The 'error' listener stays: a request erroring later must not find none (an unhandled 'error').
    req.raw.off('close', cut);
  }
  if (size === 0) {
    await deps.blobs.delete(key);
    return 0;
  }
  const piece: UploadChunk[] = [{ key, size }];
  // Only from the offset this PATCH started at: of two racing PATCHes one is recorded, the other refused.
  const [moved] = await deps.db.orm
    .update(cdnAssets)
    .set({
      uploadOffset: offset + size,
      uploadChunks: sql`coalesce(${cdnAssets.uploadChunks}, '[]'::jsonb) || ${JSON.stringify(piece)}::jsonb`,
      updatedAt: deps.clock.now(),
    })
    .where(and(eq(cdnAssets.id, row.id), eq(cdnAssets.uploadOffset, offset), eq(cdnAssets.status, 'pending')))
    .returning({ id: cdnAssets.id });
  if (!moved) {
    await deps.blobs.delete(key);
    throw cdnErrors.offsetMismatch(offset, row.size);
  }
  return size;
}

export async function deleteChunks(deps: Deps, chunks: UploadChunk[] | null): Promise<void> {
  await Promise.allSettled((chunks ?? []).map((c) => deps.blobs.delete(c.key)));
}

/**
 * At confirm: the pieces joined, in order, into the upload key (then forgotten), so the confirm reads one
 * object as it does after a PUT. Refused until every declared byte has arrived.
 */
export async function joinResumable(deps: Deps, row: AssetRow): Promise<void> {
  if ((row.uploadOffset ?? 0) < row.size)
    throw cdnErrors.resumableIncomplete(row.uploadOffset ?? 0, row.size);
  const chunks = row.uploadChunks ?? [];
  if (chunks.length === 0) return; // joined by an earlier confirm that failed later on
  async function* bytes() {
    for (const c of chunks) {
      const obj = await deps.blobs.get(c.key);
      if (!obj) throw cdnErrors.resumableIncomplete(0, row.size);
      yield* obj.body;
    }
  }
  await deps.blobs.put(uploadKeyOf(row.blobKey), Readable.from(bytes()), {
    contentType: row.declaredMimeType,
  });
  await deps.db.orm.update(cdnAssets).set({ uploadChunks: [] }).where(eq(cdnAssets.id, row.id));
  await deleteChunks(deps, chunks);
}
