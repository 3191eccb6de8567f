import { type Readable, Transform } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../config.ts';
import type { Clock } from '../clock.ts';
import { errors } from '../errors.ts';
import {
  assertBlobKey,
  type BlobInfo,
  type BlobStore,
  type ByteRange,
  type PresignedPut,
  type PutOptions,
} from './blob-store.ts';

// S3-compatible driver (AWS S3, MinIO, R2, s3rver in tests). Presigned URLs are real S3 presigned URLs, so
// uploads and downloads go straight to the object store, not through Pier.
// Checksums are only computed when an operation requires them: otherwise the SDK signs the checksum of an
// empty body into presigned URLs and frames streamed bodies with aws-chunked encoding that S3-compatible
// servers may store verbatim (see STACK-NOTES).

// The AWS SDK is a few hundred modules: loaded on first use, so a Pier on local disk (and every command of the
// CLI) never pays for it at start.
type Sdk = typeof import('@aws-sdk/client-s3') &
  typeof import('@aws-sdk/lib-storage') &
  typeof import('@aws-sdk/s3-request-presigner');
type Loaded = { sdk: Sdk; client: S3Client };
let sdk: Promise<Sdk> | undefined;
function loadSdk(): Promise<Sdk> {
  sdk ??= Promise.all([
    import('@aws-sdk/client-s3'),
    import('@aws-sdk/lib-storage'),
    import('@aws-sdk/s3-request-presigner'),
  ]).then(([a, b, c]) => ({ ...a, ...b, ...c }));
  return sdk;
}

// S3 allows 7 days at most for SigV4 presigned URLs.
const MAX_PRESIGN_SEC = 7 * 24 * 3600;

export class S3BlobStore implements BlobStore {
  readonly driver = 's3' as const;
  readonly bucket: string;
  readonly #clock: Clock;
  readonly #s3: NonNullable<Config['s3']>;
  #client: Promise<Loaded> | undefined;
  /** Set once the SDK is loaded, so the streaming put can wire its pipe without a pause. */
  #ready: Loaded | undefined;

  constructor(s3: NonNullable<Config['s3']>, clock: Clock) {
    this.bucket = s3.bucket;
    this.#clock = clock;
    this.#s3 = s3;
    // Loading starts with the store (only a Pier configured for S3 makes one); a failure surfaces on first use.
    this.#open().catch(() => undefined);
  }

  #open(): Promise<Loaded> {
    this.#client ??= loadSdk().then((sdk) => {
      this.#ready = { sdk, client: this.#newClient(sdk) };
      return this.#ready;
    });
    return this.#client;
  }

  #newClient(sdk: Sdk): S3Client {
    const s3 = this.#s3;
    return new sdk.S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: s3.forcePathStyle,
      credentials:
        s3.accessKeyId && s3.secretAccessKey
          ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }
          : undefined,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: Buffer | Readable, opts: PutOptions = {}): Promise<BlobInfo> {
    assertBlobKey(key);
    if (Buffer.isBuffer(body)) {
      if (opts.maxBytes !== undefined && body.length > opts.maxBytes) throw tooLarge(opts.maxBytes);
      const { sdk, client } = await this.#open();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentType: opts.contentType,
        }),
      );
      return { size: body.length, contentType: opts.contentType };
    }
    // A stream of unknown length: multipart upload (5 MB parts), failed as soon as it grows past maxBytes
    // (lib-storage then aborts the multipart upload, so nothing is stored).
    if (!this.#ready) {
      // Only a put in the first moments after start waits for the SDK; a body failing meanwhile is heard.
      let early: unknown;
      const hold = (err: unknown) => {
        early ??= err;
      };
      body.on('error', hold);
      await this.#open().finally(() => body.off('error', hold));
      if (early) throw early;
    }
    const { sdk, client } = this.#ready!;
    let size = 0;
    const max = opts.maxBytes;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (max !== undefined && size > max) done(tooLarge(max));
        else done(null, chunk);
      },
    });
    body.on('error', (err) => counter.destroy(err));
    body.pipe(counter);
    const upload = new sdk.Upload({
      client,
      params: { Bucket: this.bucket, Key: key, Body: counter, ContentType: opts.contentType },
      queueSize: 1,
    });
    try {
      await upload.done();
    } catch (err) {
      if (max !== undefined && size > max) throw tooLarge(max);
      throw err;
    }
    return { size, contentType: opts.contentType };
  }

  async get(key: string, opts: { range?: ByteRange } = {}): Promise<(BlobInfo & { body: Readable }) | null> {
    assertBlobKey(key);
    const { sdk, client } = await this.#open();
    try {
      const r = await client.send(
        new sdk.GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Range: opts.range ? `bytes=${opts.range.start}-${opts.range.end}` : undefined,
        }),
      );
      const total = opts.range ? totalFromContentRange(r.ContentRange) : r.ContentLength;
      return { size: total ?? 0, contentType: r.ContentType, body: r.Body as Readable };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async head(key: string): Promise<BlobInfo | null> {
    assertBlobKey(key);
    const { sdk, client } = await this.#open();
    try {
      const r = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: r.ContentLength ?? 0, contentType: r.ContentType };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    const { sdk, client } = await this.#open();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /**
   * A presigned PUT signs the content type but cannot carry a size limit (only POST policies have
   * content-length-range), so maxBytes is NOT enforced here: the caller checks head().size after the
   * upload and deletes an oversize object.
   */
  async presignPut(
    key: string,
    opts: { expiresInSec: number; contentType?: string; maxBytes?: number; singleUse?: boolean },
  ): Promise<PresignedPut> {
    assertBlobKey(key);
    const expiresIn = presignSeconds(opts.expiresInSec);
    const { sdk, client } = await this.#open();
    const url = await sdk.getSignedUrl(
      client,
      new sdk.PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: opts.contentType }),
      { expiresIn, signableHeaders: opts.contentType ? new Set(['content-type']) : undefined },
    );
    return {
      url,
      method: 'PUT',
      headers: opts.contentType ? { 'content-type': opts.contentType } : {},
      expiresAt: new Date(this.#clock.now().getTime() + expiresIn * 1000),
    };
  }

  async presignGet(key: string, opts: { expiresInSec: number }): Promise<string> {
    assertBlobKey(key);
    const expiresIn = presignSeconds(opts.expiresInSec);
    const { sdk, client } = await this.#open();
    return sdk.getSignedUrl(client, new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn,
    });
  }

  /** Multipart uploads are the object store's business (set a lifecycle rule to abort stale ones). */
  async sweepTemp(): Promise<number> {
    return 0;
  }
}

function presignSeconds(sec: number): number {
  if (!Number.isFinite(sec) || sec <= 0) {
    throw errors.validation('expiresInSec must be a positive number of seconds.');
  }
  return Math.min(Math.ceil(sec), MAX_PRESIGN_SEC);
}

function tooLarge(max: number) {
  return errors.tooLarge(`The object is larger than the ${max} bytes allowed.`);
}

function totalFromContentRange(v: string | undefined): number | undefined {
  const m = v ? /\/(\d+)$/.exec(v) : null;
  return m ? Number(m[1]) : undefined;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}
