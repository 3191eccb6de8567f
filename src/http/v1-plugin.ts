import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { V1Plugin } from '../areas/manifest.ts';
import { OrgPlanCache, PLANS } from '../areas/orgs/index.ts';
import { apiUsage } from '../core/api-usage.ts';
import { callerFromRow } from '../core/auth/credentials.ts';
import { DELEGATION_HEADER, takeDelegated } from '../core/auth/delegation.ts';
import { bearerFrom } from '../core/auth/format.ts';
import { errors } from '../core/errors.ts';
import {
  type BucketRule,
  rateLimitPolicy,
  rateLimitState,
  TokenBuckets,
} from '../core/rate-limit/token-buckets.ts';
import type { Deps } from '../deps.ts';
import { type Claim, claimOrReplay, requestHash, settle } from './idempotency.ts';
import { openApiTransform } from './openapi-errors.ts';
import { apiKeyCaller, errorEnvelopeSchema, operationDoc, type RouteDef, type V1Area } from './v1-kit.ts';

// Everything under {base_url}/v1: API-key auth, a token bucket per key, Idempotency-Key on POST, the
// error envelope, and /v1/openapi.json generated from the routes' zod schemas. Areas only declare routes
// (v1-kit.ts) in their manifests (src/areas).

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim?: Claim;
  }
  interface FastifyContextConfig {
    v1Public?: boolean;
    /**
     * For a route that may answer a stream (hijacked, so never settled by onSend): tells from the validated
     * body whether this request streams. Such a request with an Idempotency-Key is refused (docs/models.md).
     */
    v1Streams?: (body: unknown) => boolean;
  }
}

const POLICY = 'v1';

async function authenticate(deps: Deps, req: FastifyRequest): Promise<void> {
  // The MCP endpoint acting for a user in one organization and environment (docs/mcp.md, "Authorisation").
  const delegation = req.headers[DELEGATION_HEADER];
  const delegated = delegation ? takeDelegated(delegation) : undefined;
  if (delegated?.kind === 'apikey') {
    req.caller = delegated;
    return;
  }
  const bearer = bearerFrom(req.headers.authorization);
  if (!bearer) throw errors.authRequired('Send Authorization: Bearer <API_KEY>.');
  const row = await deps.credentials.verify(bearer);
  if (!row) throw errors.authRequired('The API key is not valid (unknown, revoked or expired).');
  // An OAuth access token is bound to the /mcp audience (RFC 8707): here it is no credential at all.
  if (row.kind === 'mcpat') throw errors.authRequired('This OAuth access token is only valid at /mcp.');
  const caller = callerFromRow(row);
  if (caller.kind !== 'apikey') throw errors.apiKeyRequired();
  req.caller = caller;
}

/**
 * A key's own limit, else its organization's plan's (a multiple of the configured default). The plan is read
 * once per organization and process (OrgPlanCache), so a known key costs no query here either.
 */
class V1Limiter {
  readonly #buckets: TokenBuckets;
  readonly #plans: OrgPlanCache;
  readonly #deps: Deps;
  /** One rule object per plan, made once. */
  readonly #byPlan = new Map<string, BucketRule>();

  constructor(deps: Deps, buckets: TokenBuckets) {
    this.#deps = deps;
    this.#buckets = buckets;
    this.#plans = new OrgPlanCache(deps.db);
  }

  async check(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller = apiKeyCaller(req);
    const rule = caller.rateLimit ?? (await this.#planRule(caller.orgId));
    const r = await this.#buckets.take(`v1:${caller.keyId}`, rule);
    reply.header('ratelimit-policy', rateLimitPolicy(POLICY, rule));
    reply.header('ratelimit', rateLimitState(POLICY, r));
    if (!r.allowed) throw errors.rateLimited(r.retryAfterSec);
  }

  async #planRule(orgId: string): Promise<BucketRule> {
    const now = this.#deps.clock.nowMs();
    const plan = this.#plans.known(orgId, now) ?? (await this.#plans.load(orgId, now));
    let rule = this.#byPlan.get(plan);
    if (!rule) {
      const base = this.#deps.config.v1RateLimit;
      const f = PLANS[plan].v1RateLimitFactor;
      rule = f === 1 ? base : { perSec: base.perSec * f, burst: Math.max(1, Math.round(base.burst * f)) };
      this.#byPlan.set(plan, rule);
    }
    return rule;
  }
}

function registerRoute(app: FastifyInstance, deps: Deps, area: V1Area, def: RouteDef): void {
  const status = def.status ?? 200;
  const { errorResponses, ...doc } = operationDoc(area.name, def);
  app.route({
    method: def.method,
    url: `${area.prefix}${def.url}`,
    ...(def.bodyLimit ? { bodyLimit: def.bodyLimit } : {}),
    schema: {
      ...doc,
      ...(def.body ? { body: def.body } : {}),
      ...(def.query ? { querystring: def.query } : {}),
      ...(def.params ? { params: def.params } : {}),
      response: { [status]: def.response, ...errorResponses },
    },
    handler: async (req, reply) => {
      const out = await def.handler({ deps, caller: apiKeyCaller(req), log: req.log, requestId: req.id }, {
        body: req.body,
        query: req.query,
        params: req.params,
      } as never);
      return reply.status(status).send(out);
    },
  });
}

/**
 * Registered by app.ts under the prefix /v1 with the areas' route groups. `plugins` are route groups written
 * by hand (the model proxy at /v1/ai streams) but they sit inside this plugin, so the same hooks (key,
 * bucket, Idempotency-Key) and the same OpenAPI document cover them.
 */
export async function v1Routes(
  app: FastifyInstance,
  opts: { deps: Deps; groups: readonly V1Area[]; plugins?: readonly V1Plugin[] },
): Promise<void> {
  const { deps } = opts;
  const buckets = new TokenBuckets(deps.db, deps.clock, {
    onSyncError: (err) => deps.log.warn({ err }, 'v1 rate limit: sync to the database failed (retried)'),
  });
  // The last spending reaches the shared buckets before the database goes.
  app.addHook('onClose', async () => buckets.close());
  const limiter = new V1Limiter(deps, buckets);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pier v1 API',
        version: '1.0.0',
        description:
          'Send `Authorization: Bearer <API_KEY>` (sk_live.… acts in production, sk_test.… in sandbox). ' +
          'Every failure is `{ "error": { "code", "message" } }`. POST accepts `Idempotency-Key`.',
      },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'sk_live.… or sk_test.…' },
        },
      },
    },
    transform: openApiTransform(['/v1/openapi.json'], errorEnvelopeSchema),
  });

  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.config?.v1Public) return;
    await authenticate(deps, req);
    await limiter.check(req, reply);
  });

  // After validation, so a malformed body is a plain 400 and does not claim the key.
  app.addHook('preHandler', async (req, reply) => {
    if (req.method !== 'POST') return;
    const key = req.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string') throw errors.invalidIdempotencyKey();
    if (req.routeOptions.config?.v1Streams?.(req.body)) throw errors.idempotencyWithStream();
    const hash = requestHash(req.method, req.url, req.body);
    const r = await claimOrReplay(deps, apiKeyCaller(req), key, hash);
    if ('replay' in r) {
      reply.header('idempotent-replayed', 'true');
      reply.header('content-type', r.replay.contentType);
      return reply.status(r.replay.status).send(r.replay.body);
    }
    req.idempotencyClaim = r.claim;
  });

  // Requests and errors per organization and day for the dashboard's usage charts (src/core/api-usage.ts):
  // only answers to an API key (a refused key has no organization to count for).
  const usage = apiUsage(deps.db);
  app.addHook('onResponse', (req, reply, done) => {
    const caller = req.caller as { kind?: string; orgId?: string } | undefined;
    if (caller?.kind === 'apikey' && caller.orgId)
      usage.hit(caller.orgId, reply.statusCode >= 400, deps.clock.now());
    done();
  });
  app.addHook('onClose', async () => usage.flush().catch(() => {}));

  app.addHook('onSend', async (req, reply, payload) => {
    const claim = req.idempotencyClaim;
    if (!claim) return payload;
    req.idempotencyClaim = undefined;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
    const type = reply.getHeader('content-type');
    await settle(deps, claim, reply.statusCode, typeof type === 'string' ? type : undefined, body).catch(
      (err) => req.log.error({ err }, 'idempotency record not saved'),
    );
    return payload;
  });

  for (const group of opts.groups) for (const def of group.routes) registerRoute(app, deps, group, def);
  for (const p of opts.plugins ?? []) await app.register(p.plugin, { deps, prefix: p.prefix });

  app.get('/openapi.json', { schema: { hide: true }, config: { v1Public: true } }, async () => app.swagger());
}
