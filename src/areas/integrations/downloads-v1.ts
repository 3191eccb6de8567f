import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineRoute } from '../../http/v1-kit.ts';
import { createDownloadUrl, DOWNLOAD_URL_MAX_TTL_SEC, openDownload } from './downloads.ts';
import { itemParams } from './unified-route-kit.ts';

// A storage file as a signed, short-lived URL on Pier that streams the provider's bytes (downloads.ts):
// the API route that makes the URL, and the public route that serves it.

const downloadUrlQuery = z.object({
  connectionId: z.string().min(1).max(100),
  /** Seconds the URL works; 300 unless said. */
  expiresIn: z.coerce.number().int().min(10).max(DOWNLOAD_URL_MAX_TTL_SEC).optional(),
});
const downloadUrl = z.object({ url: z.string(), expiresAt: z.string() });

export const downloadUrlRoute = defineRoute({
  method: 'GET',
  url: '/storage/files/:id/download-url',
  name: 'integrations.storage.files.downloadUrl',
  summary: 'A short-lived URL that streams a file',
  description: "Fetchable without an API key until `expiresAt`; Pier streams the provider's bytes.",
  query: downloadUrlQuery,
  params: itemParams,
  response: downloadUrl,
  errors: ['CONNECTION_NOT_FOUND', 'CONNECTION_NOT_CONNECTED', 'OPERATION_NOT_SUPPORTED'],
  handler: async (c, { query, params }) =>
    createDownloadUrl(
      c.deps,
      { orgId: c.caller.orgId, environment: c.caller.environment },
      { connectionId: query.connectionId, fileId: params.id, expiresIn: query.expiresIn },
    ),
});

/** The signed URL itself: public (the signature is the credential), the provider's bytes streamed through. */
export function registerDownloads(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/downloads/:token',
    {
      schema: { hide: true, params: z.object({ token: z.string().min(1).max(2000) }) },
      config: { v1Public: true },
    },
    async (req, reply) => {
      const f = await openDownload(deps, (req.params as { token: string }).token);
      const ascii = f.filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
      reply.headers({
        'content-type': f.mimeType,
        'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(f.filename)}`,
        'cache-control': 'private, no-store',
        ...(f.size !== null ? { 'content-length': String(f.size) } : {}),
      });
      return reply.send(f.stream);
    },
  );
}
