import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

// CORS for the capability URLs Pier serves itself: the disk driver's presigned `/blobs/*` and the public
// `/cdn/*` delivery. No cookie or credential is ever involved (the signature or the asset id is the
// capability), so `*` is safe as the default and credentials are never allowed; a configured list of
// origins is echoed per request with `Vary: Origin`.

const EXPOSED = 'ETag, Last-Modified, Content-Length, Content-Range, Content-Type, Accept-Ranges, X-Cache';

/** Adds the CORS headers to every answer of the plugin it is called in, and answers preflights. */
export function allowCors(
  app: FastifyInstance,
  origins: '*' | string[],
  methods: string,
  paths: string[],
): void {
  app.addHook('onRequest', (req, reply, done) => {
    const origin = allowedOrigin(req, origins);
    if (origins !== '*') addVary(reply, 'Origin');
    if (origin) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', EXPOSED);
    }
    done();
  });
  for (const path of paths) {
    app.options(path, async (req: FastifyRequest, reply: FastifyReply) => {
      if (allowedOrigin(req, origins)) {
        reply.header('access-control-allow-methods', methods);
        const asked = req.headers['access-control-request-headers'];
        if (typeof asked === 'string' && asked) reply.header('access-control-allow-headers', asked);
        reply.header('access-control-max-age', '86400');
      }
      return reply.status(204).send();
    });
  }
}

function allowedOrigin(req: FastifyRequest, origins: '*' | string[]): string | undefined {
  const origin = req.headers.origin;
  if (origins === '*') return '*';
  return typeof origin === 'string' && origins.includes(origin) ? origin : undefined;
}

/** Appends to Vary instead of replacing it (a transform may already vary on Accept). */
export function addVary(reply: FastifyReply, field: string): void {
  const cur = reply.getHeader('vary');
  const list = typeof cur === 'string' && cur ? cur.split(',').map((s) => s.trim()) : [];
  if (!list.some((f) => f.toLowerCase() === field.toLowerCase())) list.push(field);
  reply.header('vary', list.join(', '));
}
