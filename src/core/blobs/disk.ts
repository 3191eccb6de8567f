import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../clock.ts';
import type { Keyring } from '../crypto.ts';
import { errors } from '../errors.ts';
import {
  assertBlobKey,
  type BlobInfo,
  type BlobStore,
  type ByteRange,
  type PresignedPut,
  type PutOptions,
} from './blob-store.ts';
import { blobErrors } from './errors.ts';

// Local-disk driver. Layout under DATA_DIR/blobs:
//   objects/<key>       the bytes, exactly as uploaded (an operator can copy them out as they are)
//   meta/<key>.json     { contentType } — a sidecar, so objects stay raw files
//   tmp/<random>.part   uploads in progress; renamed into objects/ only when complete (atomic), so a reader
//                       never sees half an object and a failed or oversize upload leaves nothing behind.
// Presigned URLs point at Pier itself (`/blobs/<key>`, see routes.ts) and carry an HMAC from the keyring.

export type SignedQuery = { exp?: string; sig?: string; max?: string; ct?: string; once?: string };
export type VerifiedUrl = { maxBytes?: number; contentType?: string; singleUse: boolean };

const TMP_SUFFIX = '.part';

export class DiskBlobStore implements BlobStore {
  readonly driver = 'disk' as const;
  readonly root: string;
  readonly #keyring: Keyring;
  readonly #clock: Clock;
  readonly #publicUrl: string;

  constructor(opts: { root: string; keyring: Keyring; clock: Clock; publicUrl: string }) {
    this.root = opts.root;
    this.#keyring = opts.keyring;
    this.#clock = opts.clock;
    this.#publicUrl = opts.publicUrl.replace(/\/+$/, '');
  }

  #objectPath(key: string): string {
    assertBlobKey(key);
    return path.join(this.root, 'objects', key);
  }

  #metaPath(key: string): string {
    return path.join(this.root, 'meta', `${key}.json`);
  }

  async put(key: string, body: Buffer | Readable, opts: PutOptions = {}): Promise<BlobInfo> {
    const dest = this.#objectPath(key);
    const tmp = path.join(this.root, 'tmp', `${crypto.randomUUID()}${TMP_SUFFIX}`);
    const flush = opts.durable !== false;
    const max = opts.maxBytes;
    let size = 0;
    try {
      if (Buffer.isBuffer(body)) {
        // Every filesystem call is a trip through libuv's thread pool, which sharp's renders share: a buffer
        // is written in one call, and folders are made only when a write or rename finds them missing.
        if (max !== undefined && body.length > max) {
          throw errors.tooLarge(`The object is larger than the ${max} bytes allowed.`);
        }
        size = body.length;
        await inFolder(tmp, () => fsp.writeFile(tmp, body, { flag: 'wx', flush }));
      } else {
        const counter = new Transform({
          transform(chunk: Buffer, _enc, done) {
            size += chunk.length;
            if (max !== undefined && size > max) {
              done(errors.tooLarge(`The object is larger than the ${max} bytes allowed.`));
              return;
            }
            done(null, chunk);
          },
        });
        await mkdirFor(tmp);
        await pipeline(body, counter, fs.createWriteStream(tmp, { flags: 'wx', flush }));
      }
      await moveIntoPlace(tmp, dest);
      // Written after the object so a crash in between loses at most the content type, never the bytes.
      const metaTmp = `${tmp}.meta`;
      await fsp.writeFile(metaTmp, JSON.stringify({ contentType: opts.contentType }), { flag: 'wx' });
      await moveIntoPlace(metaTmp, this.#metaPath(key));
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      await fsp.rm(`${tmp}.meta`, { force: true });
      throw err;
    }
    return { size, contentType: opts.contentType };
  }

  async get(key: string, opts: { range?: ByteRange } = {}): Promise<(BlobInfo & { body: Readable }) | null> {
    const file = this.#objectPath(key);
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) {
        await fh.close();
        return null;
      }
      const contentType = await this.#readContentType(key);
      const range = opts.range;
      const body = fh.createReadStream(range ? { start: range.start, end: range.end } : {});
      return { size: st.size, contentType, body };
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  localFile(key: string): string {
    return this.#objectPath(key);
  }

  async head(key: string): Promise<BlobInfo | null> {
    const file = this.#objectPath(key);
    try {
      const st = await fsp.stat(file);
      if (!st.isFile()) return null;
      return { size: st.size, contentType: await this.#readContentType(key) };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.#objectPath(key);
    const metaFile = this.#metaPath(key);
    await fsp.rm(metaFile, { force: true });
    try {
      const st = await fsp.stat(file);
      if (st.isFile()) await fsp.rm(file, { force: true });
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    // Empty folders left behind would make a later key of the folder's name a conflict.
    await pruneEmptyParents(file, path.join(this.root, 'objects'));
    await pruneEmptyParents(metaFile, path.join(this.root, 'meta'));
  }

  async presignPut(
    key: string,
    opts: { expiresInSec: number; contentType?: string; maxBytes?: number; singleUse?: boolean },
  ): Promise<PresignedPut> {
    assertBlobKey(key);
    const exp = this.#expiry(opts.expiresInSec);
    const url = this.#signedUrl('PUT', key, exp, opts.maxBytes, opts.contentType, opts.singleUse);
    return {
      url,
      method: 'PUT',
      headers: opts.contentType ? { 'content-type': opts.contentType } : {},
      expiresAt: new Date(exp * 1000),
    };
  }

  async presignGet(key: string, opts: { expiresInSec: number }): Promise<string> {
    assertBlobKey(key);
    return this.#signedUrl('GET', key, this.#expiry(opts.expiresInSec));
  }

  /** Checks a presigned URL's signature, then its expiry; throws SIGNATURE_INVALID or URL_EXPIRED. */
  verify(method: 'GET' | 'PUT', key: string, q: SignedQuery): VerifiedUrl {
    const { exp, sig, max, ct, once } = q;
    if (!sig || !exp || !/^\d{1,12}$/.test(exp) || (max !== undefined && !/^\d{1,16}$/.test(max))) {
      throw blobErrors.signatureInvalid();
    }
    if (once !== undefined && once !== '1') throw blobErrors.signatureInvalid();
    const single = once === '1';
    if (!this.#keyring.verify(canonical(method, key, exp, max, ct, single), sig)) {
      throw blobErrors.signatureInvalid();
    }
    if (Number(exp) * 1000 <= this.#clock.now().getTime()) throw blobErrors.urlExpired();
    return { maxBytes: max === undefined ? undefined : Number(max), contentType: ct, singleUse: single };
  }

  /**
   * Claims a single-use URL before its body is read: a marker named for the URL's signature is created
   * exclusively, so of two PUTs (even concurrent ones) only one stores anything; the other gets 409
   * UPLOAD_URL_USED. The returned release() frees the URL again when that upload stored nothing (refused
   * as too large, cut off), so a client can retry a failed upload. Markers go with sweepTemp after expiry.
   */
  async claimUse(q: SignedQuery): Promise<() => Promise<void>> {
    const hash = crypto.createHash('sha256').update(String(q.sig)).digest('hex').slice(0, 40);
    const marker = path.join(this.root, 'used', `${q.exp}-${hash}`);
    const create = () => fsp.writeFile(marker, '', { flag: 'wx' });
    try {
      await create().catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        await fsp.mkdir(path.dirname(marker), { recursive: true });
        await create();
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw blobErrors.uploadUrlUsed();
      throw err;
    }
    return () => fsp.rm(marker, { force: true });
  }

  /** Forgets the markers of single-use URLs that have expired (they can no longer be used anyway). */
  async #sweepUsed(): Promise<void> {
    const names = await fsp.readdir(path.join(this.root, 'used')).catch(() => [] as string[]);
    const now = this.#clock.now().getTime();
    for (const name of names) {
      const exp = Number(name.split('-')[0]);
      if (Number.isFinite(exp) && exp * 1000 <= now) {
        await fsp.rm(path.join(this.root, 'used', name), { force: true });
      }
    }
  }

  async sweepTemp(olderThanMs: number): Promise<number> {
    await this.#sweepUsed();
    const dir = path.join(this.root, 'tmp');
    let names: string[];
    try {
      names = await fsp.readdir(dir);
    } catch (err) {
      if (isMissing(err)) return 0;
      throw err;
    }
    const cutoff = this.#clock.now().getTime() - olderThanMs;
    let removed = 0;
    for (const name of names) {
      const file = path.join(dir, name);
      const st = await fsp.stat(file).catch(() => null);
      if (st && st.mtimeMs < cutoff) {
        await fsp.rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }

  #expiry(expiresInSec: number): number {
    if (!Number.isFinite(expiresInSec) || expiresInSec <= 0) {
      throw errors.validation('expiresInSec must be a positive number of seconds.');
    }
    return Math.floor(this.#clock.now().getTime() / 1000 + expiresInSec);
  }

  #signedUrl(
    method: 'GET' | 'PUT',
    key: string,
    exp: number,
    maxBytes?: number,
    ct?: string,
    single = false,
  ): string {
    const q = new URLSearchParams({ exp: String(exp) });
    const max = maxBytes === undefined ? undefined : String(Math.floor(maxBytes));
    if (max !== undefined) q.set('max', max);
    if (ct !== undefined) q.set('ct', ct);
    if (single) q.set('once', '1');
    q.set('sig', this.#keyring.sign(canonical(method, key, String(exp), max, ct, single)));
    return `${this.#publicUrl}/blobs/${key}?${q.toString()}`;
  }

  async #readContentType(key: string): Promise<string | undefined> {
    try {
      const meta = JSON.parse(await fsp.readFile(this.#metaPath(key), 'utf8')) as { contentType?: string };
      return typeof meta.contentType === 'string' ? meta.contentType : undefined;
    } catch {
      return undefined;
    }
  }
}

// Everything the URL grants is signed: method, key, expiry, size limit, content type and single use (a
// line added only when set, so URLs signed before it existed stay valid); the 'blob' prefix keeps these
// signatures apart from other things the same keyring signs (cursors).
function canonical(
  method: string,
  key: string,
  exp: string,
  max?: string,
  ct?: string,
  once = false,
): string {
  return ['blob', method, key, exp, max ?? '', ct ?? '', ...(once ? ['once'] : [])].join('\n');
}

// The destination's folder usually exists: rename first, make the folder only when the rename says it is
// missing. A concurrent delete may prune the folder between mkdir and rename; one more retry covers that.
async function moveIntoPlace(tmp: string, dest: string): Promise<void> {
  await inFolder(dest, () => fsp.rename(tmp, dest));
}

/** Runs a call that creates `file`; when its folder is missing, makes it and tries again (twice at most). */
async function inFolder<T>(file: string, create: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await create();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 2) mapConflict(err);
    }
    await mkdirFor(file);
  }
}

async function pruneEmptyParents(file: string, stopAt: string): Promise<void> {
  let dir = path.dirname(file);
  while (dir.startsWith(`${stopAt}${path.sep}`)) {
    try {
      await fsp.rmdir(dir);
    } catch {
      return; // not empty (or already gone): stop
    }
    dir = path.dirname(dir);
  }
}

async function mkdirFor(file: string): Promise<void> {
  try {
    await fsp.mkdir(path.dirname(file), { recursive: true });
  } catch (err) {
    mapConflict(err);
  }
}

function mapConflict(err: unknown): never {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR' || code === 'EISDIR' || code === 'EEXIST' || code === 'ENOTEMPTY') {
    throw blobErrors.blobKeyConflict();
  }
  throw err;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
