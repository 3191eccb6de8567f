import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ByteRange, isValidBlobKey } from '../core/blobs/blob-store.ts';
import type { DiskBlobStore, SignedQuery } from '../core/blobs/disk.ts';
import { blobErrors } from '../core/blobs/errors.ts';
import { ApiError, errors } from '../core/errors.ts';
import { allowCors } from './cors.ts';

// The URLs that the disk driver's presigned URLs point at: `PUT /blobs/<key>` and `GET /blobs/<key>`
// (HEAD comes with GET). Access is by signature only — no bearer credential — exactly like S3 presigned
// URLs, so the same client code works against either driver.

type BlobRequest = FastifyRequest<{ Params: { '*': string }; Querystring: SignedQuery }>;

export async function diskBlobRoutes(
  app: FastifyInstance,
  opts: { store: DiskBlobStore; corsOrigins: '*' | string[] },
): Promise<void> {
  const store = opts.store;
  // A page on another origin (a hosted app) uploads with these URLs, as it would to a bucket with CORS.
  allowCors(app, opts.corsOrigins, 'GET, HEAD, PUT', ['/blobs/*']);
  // Scoped to this plugin: every content type is accepted and left unread, so the handler streams the
  // request to disk instead of Fastify buffering (and bodyLimit-ing) it whole.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));

  app.put('/blobs/*', async (req: BlobRequest, reply) => {
    const key = keyOf(req);
    const signed = store.verify('PUT', key, req.query);
    const contentType = headerValue(req.headers['content-type']);
    if (signed.contentType !== undefined && signed.contentType !== contentType) {
      throw blobErrors.signatureInvalid(`This URL only accepts content-type '${signed.contentType}'.`);
    }
    // Claimed before the body is read, so a used URL says so whatever the body.
    const release = signed.singleUse ? await store.claimUse(req.query) : undefined;
    const declared = Number(req.headers['content-length']);
    if (signed.maxBytes !== undefined && Number.isFinite(declared) && declared > signed.maxBytes) {
      await release?.();
      reply.header('connection', 'close');
      throw errors.tooLarge(`The object is larger than the ${signed.maxBytes} bytes allowed.`);
    }
    // A pass-through, so an oversize upload stops being read without destroying the socket: the client
    // still gets the 413 and the connection is closed after it.
    const body = new PassThrough();
    req.raw.pipe(body);
    try {
      const info = await store.put(key, body, { contentType, maxBytes: signed.maxBytes });
      return reply.status(200).send({ key, size: info.size, contentType: info.contentType ?? null });
    } catch (err) {
      await release?.();
      req.raw.unpipe(body);
      req.raw.resume();
      if (err instanceof ApiError && err.status === 413) reply.header('connection', 'close');
      throw err;
    }
  });

  app.get('/blobs/*', async (req: BlobRequest, reply: FastifyReply) => {
    const key = keyOf(req);
    store.verify('GET', key, req.query);
    const info = await store.head(key);
    if (!info) throw blobErrors.blobNotFound();
    const range = parseRange(headerValue(req.headers.range), info.size);
    const obj = await store.get(key, range ? { range } : {});
    if (!obj) throw blobErrors.blobNotFound();
    reply.header('content-type', obj.contentType ?? 'application/octet-stream');
    reply.header('accept-ranges', 'bytes');
    reply.header('cache-control', 'private, no-store');
    reply.header('x-content-type-options', 'nosniff');
    if (range) {
      reply.status(206);
      reply.header('content-range', `bytes ${range.start}-${range.end}/${obj.size}`);
      reply.header('content-length', String(range.end - range.start + 1));
    } else {
      reply.header('content-length', String(obj.size));
    }
    return reply.send(obj.body);
  });
}

function keyOf(req: BlobRequest): string {
  const key = req.params['*'];
  if (!isValidBlobKey(key)) throw blobErrors.invalidBlobKey();
  return key;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * One `bytes=` range (start-end, start-, or -suffix); several ranges or another unit are ignored and the
 * whole object is sent, as RFC 9110 allows. A range starting past the end answers 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) throw blobErrors.rangeNotSatisfiable(size);
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || start > end) throw blobErrors.rangeNotSatisfiable(size);
  return { start, end };
}
