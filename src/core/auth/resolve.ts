import type { FastifyRequest } from 'fastify';
import type { Caller } from './caller.ts';
import type { CredentialService } from './credentials.ts';
import { bearerFrom } from './format.ts';

/** Extra ways to find a caller (the dashboard's session cookie), tried when there is no bearer header. */
export type CallerResolver = (req: FastifyRequest) => Promise<Caller | null>;

export async function resolveCaller(
  req: FastifyRequest,
  credentials: CredentialService,
  fallbacks: CallerResolver[] = [],
): Promise<Caller | null> {
  const bearer = bearerFrom(req.headers.authorization);
  if (bearer) return (await credentials.verifyCaller(bearer))?.caller ?? null;
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
export function resolveCallerCached(req: FastifyRequest, credentials: CredentialService): Caller | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const bearer = bearerFrom(header);
  if (!bearer) return undefined;
  const v = credentials.verifyCached(bearer);
  return v ? v.caller : undefined;
}
