import { eq } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUuid } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import { parseRange } from '../../http/blob-routes.ts';
import { addVary, allowCors } from '../../http/cors.ts';
import { cdnErrors } from './errors.ts';
import { resumableRoutes } from './resumable.ts';
import { cdnAssets } from './tables.ts';
import { serveTransform, settleTransforms } from './transform.ts';
import { resolveTransformRequest } from './transform-request.ts';

// Public delivery under {base}/cdn: `GET /cdn/<assetId>/<filename>` (originals) and `GET /cdn/t/<assetId>?…`
// (signed transforms). No credential: the unguessable asset id (and the signature for transforms) is the
// capability, as on any CDN. Served by Pier on both blob drivers, so Range, ETag and the safety headers are
// the same everywhere (docs/decisions/031-cdn-upload-size-check.md).

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Types a browser may render inline from our origin; everything else is sent as an attachment. */
const INLINE =
  /^(image\/(png|jpeg|gif|webp|avif|bmp|tiff|svg\+xml|x-icon|vnd\.microsoft\.icon)|video\/|audio\/|application\/pdf$|text\/plain$)/;
// An SVG can carry script: rendered, it runs sandboxed with no fetches, as an image.
const SVG_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox";

type AssetReq = FastifyRequest<{ Params: { id: string; '*': string } }>;
type TransformReq = FastifyRequest<{ Params: { id: string }; Querystring: Record<string, string> }>;

export async function cdnDeliveryRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  // Pages on other origins read assets from script too (fetch, canvas), on either blob driver.
  allowCors(app, deps.config.blobCorsOrigins, 'GET, HEAD', ['/cdn/*']);
  // A miss answers before its rendition is stored; let those writes finish before the database closes.
  app.addHook('onClose', () => settleTransforms(deps.db));
  resumableRoutes(app, deps);

  app.get('/cdn/t/:id', async (req: TransformReq, reply: FastifyReply) => {
    const id = req.params.id;
    if (!isUuid(id)) throw cdnErrors.assetNotFound();
    const rawQuery = req.url.slice(req.url.indexOf('?') + 1);
    const options = await resolveTransformRequest(deps, id, req.query, req.url.includes('?') ? rawQuery : '');
    const accept = String(req.headers.accept ?? '');
    const out = await serveTransform(deps, id, options, accept);
    const etag = `"t-${out.variant.slice(-32)}"`;
    reply.header('etag', etag);
    reply.header('cache-control', IMMUTABLE);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-cache', out.cached ? 'HIT' : 'MISS');
    if (options.format === 'auto') addVary(reply, 'Accept');
    if (matches(req.headers['if-none-match'], etag)) return reply.status(304).send();
    reply.header('content-type', out.contentType);
    return reply.send(out.body);
  });

  app.get('/cdn/:id/*', async (req: AssetReq, reply: FastifyReply) => {
    const id = req.params.id;
    if (!isUuid(id)) throw cdnErrors.assetNotFound();
    const [row] = await deps.db.orm.select().from(cdnAssets).where(eq(cdnAssets.id, id));
    if (row?.status !== 'ready') throw cdnErrors.assetNotFound();
    // Assets never change in place (a new upload is a new id), so id and size identify the bytes.
    const etag = `"${row.id}-${row.size}"`;
    const modified = row.confirmedAt ?? row.createdAt;
    reply.header('etag', etag);
    reply.header('last-modified', modified.toUTCString());
    reply.header('cache-control', IMMUTABLE);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('accept-ranges', 'bytes');
    if (row.mimeType === 'image/svg+xml') reply.header('content-security-policy', SVG_CSP);
    if (!INLINE.test(row.mimeType)) {
      reply.header('content-security-policy', 'sandbox');
      reply.header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(row.filename)}`);
    }
    if (notModified(req, etag, modified)) return reply.status(304).send();
    const range = parseRange(headerValue(req.headers.range), row.size);
    const obj = await deps.blobs.get(row.blobKey, range ? { range } : {});
    if (!obj) throw cdnErrors.assetNotFound();
    reply.header('content-type', row.mimeType);
    if (range) {
      reply.status(206);
      reply.header('content-range', `bytes ${range.start}-${range.end}/${row.size}`);
      reply.header('content-length', String(range.end - range.start + 1));
    } else {
      reply.header('content-length', String(row.size));
    }
    return reply.send(obj.body);
  });
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

// If-None-Match uses the weak comparison (RFC 9110 §13.1.2): `W/"x"` matches `"x"`, any entry of a list
// may match, `*` matches any existing asset.
function matches(header: string | string[] | undefined, etag: string): boolean {
  const v = headerValue(header);
  if (!v) return false;
  return v.trim() === '*' || v.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

// If-None-Match, when sent, decides alone; If-Modified-Since is compared at the second HTTP dates carry.
function notModified(req: FastifyRequest, etag: string, modified: Date): boolean {
  if (req.headers['if-none-match'] !== undefined) return matches(req.headers['if-none-match'], etag);
  const since = Date.parse(headerValue(req.headers['if-modified-since']) ?? '');
  return Number.isFinite(since) && Math.floor(modified.getTime() / 1000) * 1000 <= since;
}
