import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Caller } from '../core/auth/caller.ts';
import { catalogueStatus, type ErrorCode } from '../core/errors.ts';
import type { Deps } from '../deps.ts';

// What an area writes to serve v1 routes: `defineRoute` per operation (its zod contract and handler in one
// place, the OpenAPI operationId is its name) and `defineV1Routes` to group them under a prefix. The plugin
// (plugin.ts) does auth, rate limits, idempotency and the OpenAPI document for all of them.

export type ApiKeyCaller = Extract<Caller, { kind: 'apikey' }>;

/** The caller of a v1 request (the plugin's onRequest hook has checked it is an API key). */
export function apiKeyCaller(req: FastifyRequest): ApiKeyCaller {
  return req.caller as ApiKeyCaller;
}

export type V1Context = {
  deps: Deps;
  /** The API key's organization and environment (live → production, test → sandbox). */
  caller: ApiKeyCaller;
  log: FastifyBaseLogger;
  requestId: string;
};

/** The parsed value of an optional schema (undefined without one), as a handler receives it. */
export type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

export type RouteDef<
  B extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  P extends z.ZodType | undefined = z.ZodType | undefined,
  O extends z.ZodType = z.ZodType,
> = {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path inside the area, e.g. `/emails/:id`. */
  url: string;
  /** Operation name (`mail.send`), used as OpenAPI operationId, in logs and rate-limit keys. */
  name: string;
  summary: string;
  description?: string;
  body?: B;
  query?: Q;
  params?: P;
  response: O;
  /**
   * A lighter body schema for the operation's MCP tool, where the full one repeats another tool's (every
   * session pays for tools/list in context); the route still validates with `body`.
   */
  toolBody?: z.ZodType;
  /** Request body limit in bytes when the default 1 MiB is too small (batches). */
  bodyLimit?: number;
  /** Success status (default 200). */
  status?: number;
  /**
   * Error codes this operation answers beyond AUTH_REQUIRED, FORBIDDEN, RATE_LIMITED, VALIDATION_ERROR; only
   * catalogued codes (an area's `errors.ts` or the shared ones) type-check.
   */
  errors: readonly ErrorCode[];
  handler: (
    ctx: V1Context,
    input: { body: Infer<B>; query: Infer<Q>; params: Infer<P> },
  ) => Promise<z.infer<O>>;
};

export function defineRoute<
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  P extends z.ZodType | undefined = undefined,
  O extends z.ZodType = z.ZodType,
>(def: RouteDef<B, Q, P, O>): RouteDef<B, Q, P, O> {
  return def;
}

export type V1Area = {
  /** Tag in the OpenAPI document. */
  name: string;
  /** Mounted at /v1<prefix>, e.g. `/mail`. */
  prefix: string;
  routes: RouteDef[];
};

export function defineV1Routes(area: { name: string; prefix: string; routes: unknown[] }): V1Area {
  return area as V1Area;
}

export const errorEnvelopeSchema = z
  .object({ error: z.object({ code: z.string(), message: z.string() }) })
  .describe('Error envelope');

const SHARED_ERROR_STATUSES = [400, 401, 403, 404, 409, 429];
const SHARED_ERROR_CODES: readonly ErrorCode[] = [
  'AUTH_REQUIRED',
  'FORBIDDEN',
  'RATE_LIMITED',
  'VALIDATION_ERROR',
];

/**
 * The OpenAPI side of a v1 operation: operationId, tag, key security, the error codes in the description
 * and the envelope for every error status. Used by defineRoute routes and by the routes registered by hand
 * (the model proxy, which streams).
 */
export function operationDoc(
  tag: string,
  op: {
    name: string;
    summary: string;
    description?: string;
    errors: readonly ErrorCode[];
    errorStatuses?: number[];
  },
) {
  const codes = [...SHARED_ERROR_CODES, ...op.errors];
  const statuses = [
    ...new Set([
      ...SHARED_ERROR_STATUSES,
      // A listed code beyond the shared statuses (a 422, a 502) declares its status too.
      ...op.errors.flatMap((c) => catalogueStatus(c) ?? []),
      ...(op.errorStatuses ?? []),
    ]),
  ];
  return {
    operationId: op.name,
    summary: op.summary,
    description: `${op.description ? `${op.description}\n\n` : ''}Error codes: ${codes.join(', ')}.`,
    tags: [tag],
    security: [{ apiKey: [] }],
    errorResponses: Object.fromEntries(statuses.map((s) => [s, errorEnvelopeSchema])),
  };
}

/** `{ id }` path parameter shared by most resources; any string, so a malformed id is simply a 404. */
export const idParams = z.object({ id: z.string().min(1).max(200) });
