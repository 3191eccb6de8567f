import swagger from '@fastify/swagger';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
} from 'fastify';
import { z } from 'zod';
import type { Caller } from '../core/auth/caller.ts';
import { DELEGATION_HEADER, takeDelegated } from '../core/auth/delegation.ts';
import { type CallerResolver, resolveCaller, resolveCallerCached } from '../core/auth/resolve.ts';
import { errors } from '../core/errors.ts';
import type { Deps } from '../deps.ts';
import { fastSerializerCompiler, fastValidatorCompiler } from './fast-schemas.ts';
import { authorize, hasNul } from './fn-call.ts';
import type { FnAuth, FnDef } from './fn-kit.ts';
import { type FnRateLimit, fnRateLimitFor } from './fn-rate-limit.ts';
import { functions } from './fn-registry.ts';
import { openApiTransform } from './openapi-errors.ts';

export const errorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/**
 * Resolves and authorizes the caller. Callback-style, with a synchronous path for a cached credential: on
 * the hot path an async hook costs a promise and a microtask turn per request. A function open to anyone
 * ('none') resolves no caller at all, so neither a stale bearer nor a dashboard cookie without its CSRF
 * header can make it fail.
 */
function authHook(
  auth: FnAuth,
  deps: Deps,
  resolvers: CallerResolver[],
  limit: FnRateLimit,
): onRequestHookHandler {
  // Limited by client address, before anything else runs.
  if (auth.kind === 'none') return (req, reply, done) => limit.check(req, reply, null, done);
  const settle = (
    req: FastifyRequest,
    reply: FastifyReply,
    caller: Caller | null,
    done: (err?: Error) => void,
  ) => {
    req.caller = caller;
    // The token is taken before authorisation, so a refused credential is limited too (by address).
    limit.check(req, reply, caller, (err) => {
      if (err) return done(err);
      try {
        authorize(auth, caller);
      } catch (e) {
        return done(e as Error);
      }
      done();
    });
  };
  return (req, reply, done) => {
    // The MCP endpoint's in-process call for a caller it already resolved (core/auth/delegation.ts).
    const delegation = req.headers[DELEGATION_HEADER];
    const delegated = delegation ? takeDelegated(delegation) : undefined;
    if (delegated) return settle(req, reply, delegated, done);
    const cached = resolveCallerCached(req, deps.credentials);
    if (cached) return settle(req, reply, cached, done);
    resolveCaller(req, deps.credentials, resolvers).then((caller) => settle(req, reply, caller, done), done);
  };
}

/** The handler's FnContext; the client address and logger are looked up only by handlers that use them. */
class CallContext {
  readonly deps: Deps;
  readonly caller: Caller | null;
  readonly #req: FastifyRequest;

  constructor(deps: Deps, req: FastifyRequest) {
    this.deps = deps;
    this.caller = req.caller;
    this.#req = req;
  }

  get ip(): string {
    return this.#req.ip || this.#req.socket.remoteAddress || 'unknown';
  }

  get log(): FastifyBaseLogger {
    return this.#req.log;
  }
}

/** Serves every function at POST /api/fn/<name> and the OpenAPI document generated from their schemas. */
export async function functionApiRoutes(
  app: FastifyInstance,
  opts: { deps: Deps; resolvers: CallerResolver[] },
): Promise<void> {
  const { deps } = opts;
  const limit = fnRateLimitFor(deps);
  // The last spending reaches the shared buckets before the database goes.
  app.addHook('onClose', async () => limit.close());
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pier function API',
        version: '1.0.0',
        description: 'POST {base_url}/api/fn/<functionName> with a flat JSON body.',
      },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'pk.…, plat.… or op.… credential' },
        },
      },
    },
    transform: openApiTransform(
      ['/api/fn/openapi.json', '/api/fn/*', '/api/fn/:name'],
      errorSchema.describe('Error envelope'),
    ),
  });

  const errorResponses = Object.fromEntries(
    [400, 401, 403, 404, 409, 429].map((s) => [s, errorSchema.describe('Error envelope')]),
  );

  for (const def of functions as readonly FnDef[]) {
    app.post(
      `/api/fn/${def.name}`,
      {
        schema: {
          operationId: def.name,
          summary: def.summary,
          description: def.errors.length ? `Error codes: ${def.errors.join(', ')}.` : undefined,
          tags: [def.auth.kind === 'none' ? 'public' : def.auth.kind],
          security: def.auth.kind === 'none' ? [] : [{ bearer: [] }],
          body: def.input,
          response: { 200: def.output, ...errorResponses },
        },
        onRequest: authHook(def.auth, deps, opts.resolvers, limit),
        validatorCompiler: fastValidatorCompiler as never,
        serializerCompiler: fastSerializerCompiler as never,
      },
      // Not async: the handler's own promise is enough (Fastify catches a synchronous throw).
      (req) => {
        // Here rather than in a hook (one less step per call); the schema has already run.
        if (hasNul(req.body)) throw errors.validation('Strings must not contain NUL characters.');
        return def.handler(new CallContext(deps, req) as never, req.body as never);
      },
    );
  }

  app.post('/api/fn/:name', { schema: { hide: true } }, async (req) => {
    throw errors.functionNotFound((req.params as { name: string }).name.slice(0, 100));
  });
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: '/api/fn/*',
    schema: { hide: true },
    handler: async (_req, reply) => {
      reply.header('allow', 'POST');
      throw errors.methodNotAllowed();
    },
  });
  app.get('/api/fn/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
