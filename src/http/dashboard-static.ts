import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { errors } from '../core/errors.ts';
import { MAX_PARAM_LENGTH } from './framework-errors.ts';

// Serves the built dashboard (web/dist) at `/`, with the SPA's index.html for any other page path. The
// API surfaces keep their own 404s: this never answers under their prefixes.

export const WEB_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');
const RESERVED = ['/api', '/v1', '/.well-known', '/healthz', '/readyz', '/blobs', '/cdn'];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

// The dashboard only talks to its own origin and may never be framed (the approval page hands out codes).
// Inline styles are allowed because the dev inbox previews mail in a srcdoc iframe, which inherits this
// policy, and mail HTML is styled inline; scripts stay same-origin files only. frame-src 'self' keeps that
// iframe from being navigated anywhere else (the preview also carries its own stricter CSP, see
// web/src/pages/inbox-message.tsx).
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; " +
  "object-src 'none'";

function isReserved(urlPath: string): boolean {
  return RESERVED.some((p) => urlPath === p || urlPath.startsWith(`${p}/`));
}

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Pier</title>
<p>The dashboard is not built. Run <code>npm start</code> (it builds <code>web/</code>) or <code>npm run web:build</code>.</p>`;

export async function dashboardStaticRoutes(
  app: FastifyInstance,
  opts: { dist?: string } = {},
): Promise<void> {
  const dist = opts.dist ?? WEB_DIST;
  // Hashed assets never change, so each is gzipped once per process (the JS budget is measured gzipped).
  const gzipped = new Map<string, Buffer>();

  async function sendIndex(reply: FastifyReply) {
    const html = await fs.readFile(path.join(dist, 'index.html'), 'utf8').catch(() => NOT_BUILT);
    return reply
      .header('content-type', TYPES['.html'])
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CSP)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(html);
  }

  app.get('/*', async (req, reply) => {
    const urlPath = decodeURIComponent(req.url.split('?')[0]!.split('#')[0]!);
    if (isReserved(urlPath)) {
      // An API path with a parameter too long for the router lands here (this route is its GET fallback):
      // the same 414 as other methods get from the router.
      if (urlPath.split('/').some((s) => s.length > MAX_PARAM_LENGTH)) throw errors.uriTooLong();
      throw errors.notFound('NOT_FOUND', `GET ${urlPath}`);
    }
    const ext = path.extname(urlPath);
    if (!ext || ext === '.html') return sendIndex(reply);
    const file = path.resolve(dist, `.${path.posix.normalize(urlPath)}`);
    if (!file.startsWith(`${dist}${path.sep}`)) throw errors.notFound('NOT_FOUND', `GET ${urlPath}`);
    const body = await fs.readFile(file).catch(() => null);
    if (!body) throw errors.notFound('NOT_FOUND', `GET ${urlPath}`);
    // Vite puts content hashes in asset names, so those can be cached for good.
    const immutable = urlPath.startsWith('/assets/');
    reply.header('vary', 'accept-encoding');
    if (immutable && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) && ext !== '.png') {
      let gz = gzipped.get(file);
      if (!gz) {
        gz = zlib.gzipSync(body, { level: 9 });
        gzipped.set(file, gz);
      }
      reply.header('content-encoding', 'gzip');
      return reply
        .header('content-type', TYPES[ext] ?? 'application/octet-stream')
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .send(gz);
    }
    return reply
      .header('content-type', TYPES[ext] ?? 'application/octet-stream')
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .send(body);
  });
}
