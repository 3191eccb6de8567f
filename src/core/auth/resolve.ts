import type { FastifyRequest } from 'fastify';
import type { Caller } from './caller.ts';
import { type CredentialService, callerFromRow } from './credentials.ts';
import { bearerFrom } from './format.ts';

/** Extra ways to find a caller (the dashboard's session cookie), tried when there is no bearer header. */
export type CallerResolver = (req: FastifyRequest) => Promise<Caller | null>;

export async function resolveCaller(
  req: FastifyRequest,
  credentials: CredentialService,
  fallbacks: CallerResolver[] = [],
): Promise<Caller | null> {
  const bearer = bearerFrom(req.headers.authorization);
  if (bearer) {
    const row = await credentials.verify(bearer);
    return row ? callerFromRow(row) : null;
  }
  if (req.headers.authorization) return null;
  for (const f of fallbacks) {
    const c = await f(req);
    if (c) return c;
  }
  return null;
}
