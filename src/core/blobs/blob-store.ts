import type { Readable } from 'node:stream';
import { blobErrors } from './errors.ts';

// Where uploaded artifacts, CDN assets, screenshots and renders live. Two drivers: local disk under
// DATA_DIR/blobs (presigned URLs are HMAC-signed URLs that Pier serves itself) and S3-compatible storage.

export type BlobInfo = { size: number; contentType?: string };

export type PresignedPut = {
  url: string;
  method: 'PUT';
  /** Headers the uploader must send with the PUT (e.g. content-type). */
  headers: Record<string, string>;
  expiresAt: Date;
};

/** An inclusive byte range, as in an HTTP `Range: bytes=start-end` header. */
export type ByteRange = { start: number; end: number };

export type PutOptions = {
  contentType?: string;
  /** Refuse (413 PAYLOAD_TOO_LARGE, nothing stored) once the body grows past this many bytes. */
  maxBytes?: number;
  /**
   * false: the bytes can be made again (a cached rendition), so the disk driver skips the fsync that makes
   * an upload survive a power cut; a lost object is a cache miss. Default true.
   */
  durable?: boolean;
};

export interface BlobStore {
  readonly driver: 'disk' | 's3';
  put(key: string, body: Buffer | Readable, opts?: PutOptions): Promise<BlobInfo>;
  /** The object as a stream, or null when there is none. With a range, only those bytes are streamed. */
  get(key: string, opts?: { range?: ByteRange }): Promise<(BlobInfo & { body: Readable }) | null>;
  head(key: string): Promise<BlobInfo | null>;
  /**
   * Where the object lives as a local file, for readers that open files themselves (sharp reads a source
   * image with one trip to the thread pool instead of a stream's many); the file may not exist. Only the
   * disk driver has one.
   */
  localFile?(key: string): string;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * A URL an outside client can PUT the object to until it expires. The disk driver enforces maxBytes
   * while streaming; S3 presigned PUTs cannot carry a size limit, so callers verify the size with head()
   * after the upload (and delete oversize objects). singleUse: the disk driver accepts one complete PUT
   * per URL (a second answers 409 UPLOAD_URL_USED); S3 cannot, so callers move the object to a key the
   * URL does not name before trusting it.
   */
  presignPut(
    key: string,
    opts: { expiresInSec: number; contentType?: string; maxBytes?: number; singleUse?: boolean },
  ): Promise<PresignedPut>;
  presignGet(key: string, opts: { expiresInSec: number }): Promise<string>;
  /** Removes abandoned partial uploads older than the given age; returns how many were removed. */
  sweepTemp(olderThanMs: number): Promise<number>;
}

export const MAX_KEY_LENGTH = 512;
const KEY_RE = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/**
 * Keys are relative paths of [A-Za-z0-9._-] segments: no leading or doubled '/', no '.' or '..' segment,
 * at most 512 characters. This keeps every key inside the blob folder on disk and identical on S3.
 */
export function isValidBlobKey(key: string): boolean {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) return false;
  if (!KEY_RE.test(key)) return false;
  return key.split('/').every((s) => s !== '.' && s !== '..');
}

export function assertBlobKey(key: string): void {
  if (!isValidBlobKey(key)) throw blobErrors.invalidBlobKey();
}
