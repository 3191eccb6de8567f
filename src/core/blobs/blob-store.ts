import type { Readable } from 'node:stream';

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

export interface BlobStore {
  readonly driver: 'disk' | 's3';
  put(key: string, body: Buffer | Readable, opts?: { contentType?: string }): Promise<BlobInfo>;
  /** The object as a stream, or null when there is none. */
  get(key: string): Promise<(BlobInfo & { body: Readable }) | null>;
  head(key: string): Promise<BlobInfo | null>;
  delete(key: string): Promise<void>;
  /** A URL an outside client can PUT the object to until it expires; maxBytes is enforced where the driver can. */
  presignPut(
    key: string,
    opts: { expiresInSec: number; contentType?: string; maxBytes?: number },
  ): Promise<PresignedPut>;
  presignGet(key: string, opts: { expiresInSec: number }): Promise<string>;
}
