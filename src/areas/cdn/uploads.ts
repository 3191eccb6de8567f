import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { and, eq } from 'drizzle-orm';
import { errors } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import { projectForApiKey } from '../orgs/index.ts';
import {
  type AssetRow,
  type CdnScope,
  cdnUrlOf,
  findAsset,
  tenantOf,
  toAssetOut,
  toAssetOuts,
  uploadKeyOf,
} from './assets.ts';
import { cdnErrors } from './errors.ts';
import { type Inspection, inspectFile } from './inspect.ts';
import { scratchDir, withBlobCopy } from './local-copy.ts';
import { deleteChunks, joinResumable, RESUMABLE_TTL_SEC, resumableUrl, TUS_VERSION } from './resumable.ts';
import { MAX_RESUMABLE_BYTES, MAX_UPLOAD_BYTES, type UploadBody } from './schema.ts';
import { cdnAssets } from './tables.ts';

// Uploads: a presigned PUT straight to the blob store (Pier's own signed URL on disk, the object store on
// S3), then a confirm that reads the real bytes. Size: the disk driver's signed URL refuses a body past
// the declared size while streaming; an S3 presigned PUT cannot carry a limit (and s3rver ignores POST
// policies), so confirm compares the stored size with the declaration and deletes an oversize object
// (docs/decisions/031-cdn-upload-size-check.md).
// Single use: the client PUTs to an upload key (`cdn-upload/…`) and confirm copies the bytes it inspected to
// the asset's own key (`cdn/…`), which no URL handed out can write, then deletes the upload. A later PUT to
// the same URL cannot touch the asset on either driver; the disk driver refuses it outright (409
// UPLOAD_URL_USED), S3 stores it under the upload key where nothing reads it (decision 107).

/** How long an upload URL stays valid; confirm after this answers UPLOAD_EXPIRED. */
export const UPLOAD_TTL_SEC = 3600;

/** Blob keys allow [A-Za-z0-9._-]; the real filename stays in the row and the delivery URL. */
export function blobKeyFor(orgId: string, id: string, filename: string): string {
  const safe =
    filename
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[._]+/, '')
      .slice(-100) || 'file';
  return `cdn/${orgId}/${id}/${safe}`;
}

export async function requestUpload(deps: Deps, s: CdnScope, body: UploadBody) {
  const projectId = body.projectSlug ? (await projectForApiKey(deps, s.orgId, body.projectSlug)).id : null;
  if (!body.resumable && body.size > MAX_UPLOAD_BYTES)
    throw errors.validation(
      `size: at most ${MAX_UPLOAD_BYTES} bytes; larger files upload with resumable: true.`,
    );
  const id = crypto.randomUUID();
  const blobKey = blobKeyFor(s.orgId, id, body.filename);
  const put = body.resumable
    ? {
        url: resumableUrl(deps, id),
        headers: { 'Tus-Resumable': TUS_VERSION },
        expiresAt: new Date(deps.clock.now().getTime() + RESUMABLE_TTL_SEC * 1000),
      }
    : await deps.blobs.presignPut(uploadKeyOf(blobKey), {
        expiresInSec: UPLOAD_TTL_SEC,
        contentType: body.mimeType,
        maxBytes: body.size,
        singleUse: true,
      });
  const now = deps.clock.now();
  await deps.db.orm.insert(cdnAssets).values({
    id,
    orgId: s.orgId,
    environment: s.environment,
    projectId,
    filename: body.filename,
    folder: body.folder ?? '',
    mimeType: body.mimeType,
    declaredMimeType: body.mimeType,
    type: 'other',
    size: body.size,
    status: 'pending',
    metadata: body.metadata ?? {},
    blobKey,
    uploadExpiresAt: put.expiresAt,
    ...(body.resumable ? { uploadOffset: 0, uploadChunks: [] } : {}),
    createdAt: now,
    updatedAt: now,
  });
  return {
    uploadUrl: put.url,
    uploadHeaders: put.headers,
    assetId: id,
    cdnUrl: cdnUrlOf(deps, id, body.filename),
    expiresAt: put.expiresAt.toISOString(),
  };
}

async function discard(deps: Deps, row: AssetRow): Promise<void> {
  await deps.db.orm.delete(cdnAssets).where(eq(cdnAssets.id, row.id));
  await Promise.all([
    deps.blobs.delete(row.blobKey),
    deps.blobs.delete(uploadKeyOf(row.blobKey)),
    deleteChunks(deps, row.uploadChunks),
  ]);
}

export async function confirmUpload(deps: Deps, s: CdnScope, id: string) {
  const row = await findAsset(deps, s, id);
  if (row.status !== 'pending') throw cdnErrors.uploadAlreadyConfirmed();
  if (row.uploadExpiresAt && row.uploadExpiresAt.getTime() <= deps.clock.now().getTime()) {
    await discard(deps, row);
    throw cdnErrors.assetUploadExpired();
  }
  if (row.uploadOffset !== null) await joinResumable(deps, row);
  // Rows requested before uploads had their own key were PUT straight to the asset's key.
  let source = uploadKeyOf(row.blobKey);
  let head = await deps.blobs.head(source);
  if (!head) {
    source = row.blobKey;
    head = await deps.blobs.head(source);
  }
  if (!head) throw cdnErrors.uploadIncomplete();
  if (
    head.size > row.size ||
    head.size > (row.uploadOffset === null ? MAX_UPLOAD_BYTES : MAX_RESUMABLE_BYTES)
  ) {
    await discard(deps, row);
    throw cdnErrors.uploadTooLarge(row.size);
  }
  const { found, size } = await withBlobCopy(deps.blobs, source, async (file) => {
    if (!file) throw cdnErrors.uploadIncomplete();
    // The copy is what is inspected and what the asset keeps: a PUT racing this confirm changes neither.
    const { size } = await fsp.stat(file);
    if (size > row.size) {
      await discard(deps, row);
      throw cdnErrors.uploadTooLarge(row.size);
    }
    const found = await inspectFile(file, row.declaredMimeType, deps.config.media.ffprobePath);
    if (source !== row.blobKey) {
      await deps.blobs.put(row.blobKey, fs.createReadStream(file), { contentType: found.mimeType });
    }
    return { found, size };
  });
  if (source !== row.blobKey) await deps.blobs.delete(source);
  const now = deps.clock.now();
  // Only a pending row is confirmed: of two concurrent confirms, the second finds nothing to update.
  const [done] = await deps.db.orm
    .update(cdnAssets)
    .set({ ...fieldsOf(found), size, confirmedAt: now, updatedAt: now })
    .where(and(tenantOf(s), eq(cdnAssets.id, id), eq(cdnAssets.status, 'pending')))
    .returning();
  if (!done) throw cdnErrors.uploadAlreadyConfirmed();
  const [out] = await toAssetOuts(deps, [done]);
  return out!;
}

function fieldsOf(i: Inspection) {
  return {
    mimeType: i.mimeType,
    type: i.type,
    status: i.status,
    error: i.error,
    width: i.width,
    height: i.height,
    duration: i.duration,
    media: i.media,
    frames: i.frames ?? null,
    placeholder: i.placeholder ?? null,
  };
}

export type StoreAssetInput = {
  orgId: string;
  environment: CdnScope['environment'];
  /** The content: a buffer, a stream (read once), or a local file Pier made (read in place, not copied). */
  bytes?: Buffer;
  stream?: Readable;
  file?: string;
  /** What Pier made the content as (a merge output): trusted, so the bytes are neither sniffed nor probed. */
  known?: Inspection;
  filename: string;
  /** What the producer believes the content is; the bytes are sniffed and win. */
  mimeType: string;
  folder?: string;
  metadata?: Record<string, unknown>;
  projectId?: string | null;
  /** 'derived' for outputs Pier made from other assets (merges, renditions); default 'upload'. */
  origin?: 'upload' | 'derived';
  /** Refuse content past this many bytes (default 100 MB, the upload limit; derived outputs may pass more). */
  maxBytes?: number;
};

/**
 * Stores bytes produced inside Pier (screenshots, workflow outputs, merge results) as a ready asset, with the
 * same checks as an upload's confirm. For other areas, through the CDN's index.ts.
 */
export async function storeAsset(deps: Deps, input: StoreAssetInput) {
  const source = input.bytes ? Readable.from([input.bytes]) : input.stream;
  if (!source && !input.file) throw errors.validation('storeAsset needs bytes, a stream or a file.');
  const dir = await scratchDir('store');
  try {
    // A file is inspected where it lies: a merge output is already local, and copying it would add a
    // full write of the output to every merge.
    const file = input.file ?? path.join(dir, 'content');
    if (!input.file) await pipeline(source!, fs.createWriteStream(file));
    const { size } = await fsp.stat(file);
    const max = input.maxBytes ?? MAX_UPLOAD_BYTES;
    if (size > max) throw errors.tooLarge(`The content is larger than the ${max} bytes allowed.`);
    const found =
      input.known ?? (await inspectFile(file, input.mimeType.toLowerCase(), deps.config.media.ffprobePath));
    const id = crypto.randomUUID();
    const blobKey = blobKeyFor(input.orgId, id, input.filename);
    await deps.blobs.put(blobKey, fs.createReadStream(file), { contentType: found.mimeType });
    const now = deps.clock.now();
    const [row] = await deps.db.orm
      .insert(cdnAssets)
      .values({
        id,
        orgId: input.orgId,
        environment: input.environment,
        projectId: input.projectId ?? null,
        filename: input.filename,
        folder: input.folder ?? '',
        declaredMimeType: input.mimeType.toLowerCase(),
        ...fieldsOf(found),
        size,
        metadata: input.metadata ?? {},
        origin: input.origin ?? 'upload',
        blobKey,
        confirmedAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return toAssetOut(deps, row!);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
