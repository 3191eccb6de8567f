import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type { Caller } from '../core/auth/caller.ts';
import { type ApiError, errors } from '../core/errors.ts';
import type { Deps } from '../deps.ts';
import { toApiError } from './error-handler.ts';
import { fastSerializerCompiler, fastValidatorCompiler } from './fast-schemas.ts';
import type { FnAuth, FnDef } from './fn-kit.ts';
import { fnRateLimitFor } from './fn-rate-limit.ts';

// The checks of POST /api/fn/<name> that do not depend on HTTP, shared by the route (fn-route.ts) and by
// callers that already hold a resolved caller (the MCP endpoint's tools): authorisation, the input schema,
// the NUL check, the handler and the output serializer, compiled by the same compilers as the route's, after
// a token from the same rate-limit bucket as the route's.
// Nothing here may import the function registry: the MCP area imports this file.

export function authorize(auth: FnAuth, caller: Caller | null): void {
  if (auth.kind === 'none') return;
  if (!caller) throw errors.authRequired();
  if (auth.kind === 'user' && caller.kind !== 'user')
    throw errors.forbidden('This function needs a personal token.');
  if (auth.kind === 'operator' && caller.kind !== 'operator')
    throw errors.forbidden('This function needs the operator key.');
  if (auth.kind === 'platform') {
    if (caller.kind !== 'platform') throw errors.forbidden('This function needs a platform credential.');
    if (!caller.scopes.includes(auth.scope)) throw errors.scopeDenied(auth.scope);
  }
}

/** PostgreSQL text cannot hold NUL; refuse it up front instead of failing in the database. */
export function hasNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 32 || value === null || typeof value !== 'object') return false;
  const o = value as Record<string, unknown>;
  for (const k in o) if (k.includes('\u0000') || hasNul(o[k], depth + 1)) return true;
  return false;
}

type Validate = (data: unknown) => { value?: unknown; error?: unknown };
type Compiled = { validate: Validate; serialize: (data: unknown) => string };

const compiledFns = new WeakMap<FnDef, Compiled>();

function compiled(def: FnDef): Compiled {
  let c = compiledFns.get(def);
  if (!c) {
    const url = `/api/fn/${def.name}`;
    c = {
      validate: fastValidatorCompiler({
        schema: def.input,
        method: 'POST',
        url,
        httpPart: 'body',
      } as never) as unknown as Validate,
      serialize: fastSerializerCompiler({
        schema: def.output as z.ZodType,
        method: 'POST',
        url,
        httpStatus: '200',
      } as never) as (data: unknown) => string,
    };
    compiledFns.set(def, c);
  }
  return c;
}

export type FnCallResult = { ok: true; json: string } | { ok: false; error: ApiError };

/**
 * Calls one function for an already resolved caller, as its route would: the same refusals (as the error
 * envelope's ApiError, a failure logged as the error handler logs it) and the answer as the route's JSON.
 */
export async function callFunction(
  deps: Deps,
  def: FnDef,
  caller: Caller | null,
  input: unknown,
  ctx: { ip: string; log: FastifyBaseLogger },
): Promise<FnCallResult> {
  try {
    const refused = await fnRateLimitFor(deps).refusal(def.auth.kind === 'none' ? null : caller, ctx.ip);
    if (refused) throw refused;
    authorize(def.auth, def.auth.kind === 'none' ? null : caller);
    const { validate, serialize } = compiled(def);
    const checked = validate(input ?? null);
    if (checked.error)
      throw Object.assign(new Error('validation'), { validation: checked.error, validationContext: 'body' });
    const body = 'value' in checked ? checked.value : input;
    if (hasNul(body)) throw errors.validation('Strings must not contain NUL characters.');
    const fnCtx = { deps, caller: def.auth.kind === 'none' ? null : caller, ip: ctx.ip, log: ctx.log };
    const out = await def.handler(fnCtx as never, body as never);
    return { ok: true, json: serialize(out) };
  } catch (err) {
    const error = toApiError(err);
    if (error.status >= 500) ctx.log.error({ err }, 'request failed');
    return { ok: false, error };
  }
}
