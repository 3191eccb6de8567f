import type { FastifyRequest } from 'fastify';
import type { Caller } from './caller.ts';
import type { CredentialService } from './credentials.ts';
import { bearerFrom } from './format.ts';

/** Extra ways to find a caller (the dashboard's session cookie), tried when there is no bearer header. */
export type CallerResolver = (req: FastifyRequest) => Promise<Caller | null>;

export type ResolveOptions = {
  /**
   * The resource this route serves (RFC 8707). An OAuth access token is bound to one audience and is
   * refused everywhere else: without this option (the function API, v1) no OAuth caller resolves at all.
   * See docs/decisions/063-oauth-tokens-only-at-their-audience.md.
   */
  audience?: string;
};

/** null for an OAuth caller whose token was not issued for this route's resource. */
export function acceptAudience(caller: Caller | null, opts: ResolveOptions = {}): Caller | null {
  if (caller?.kind === 'user' && caller.via === 'oauth') {
    return opts.audience && caller.oauth?.audience === opts.audience ? caller : null;
  }
  return caller;
}

export async function resolveCaller(
  req: FastifyRequest,
  credentials: CredentialService,
  fallbacks: CallerResolver[] = [],
  opts: ResolveOptions = {},
): Promise<Caller | null> {
  const header = req.headers.authorization;
  const bearer = bearerFrom(header);
  if (bearer) {
    const v = await credentials.verifyCaller(bearer);
    if (v) credentials.rememberHeader(header!, v);
    return acceptAudience(v?.caller ?? null, opts);
  }
  // A bearer-shaped header that does not parse is a bad credential, not a reason to try the cookie.
  if (req.headers.authorization) return null;
  for (const f of fallbacks) {
    const c = await f(req);
    if (c) return c;
  }
  return null;
}

/**
 * The synchronous hot path of resolveCaller: a bearer credential verified before and still cached.
 * undefined means "needs the full (async) resolveCaller".
 */
export function resolveCallerCached(
  req: FastifyRequest,
  credentials: CredentialService,
  opts: ResolveOptions = {},
): Caller | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  // A header seen and verified before: one Map lookup, no parsing and no SHA-256.
  let v = credentials.verifyHeaderCached(header);
  if (v === undefined) {
    const bearer = bearerFrom(header);
    if (!bearer) return undefined;
    v = credentials.verifyCached(bearer);
    if (v) credentials.rememberHeader(header, v);
  }
  if (!v) return undefined;
  // A refused OAuth caller takes the slow path, which answers null (401) the same way.
  return acceptAudience(v.caller, opts) ?? undefined;
}
