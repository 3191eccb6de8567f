import { and, isNotNull, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { oauthRefreshTokens, oauthRequests } from './tables.ts';

// Anyone may start an authorization request (that is the protocol), so pending and spent requests, and
// refresh tokens that are used or expired, are deleted once nothing can need them. A day's margin keeps a
// replayed code or refresh token recognisable (and its grant revoked) for a while after its use.

export const OAUTH_PRUNE_JOB = 'oauth.prune';
export const OAUTH_PRUNE_CRON = '17 * * * *';
const KEEP_MS = 24 * 3600 * 1000;

export async function pruneOauth(deps: Deps): Promise<{ requests: number; refreshTokens: number }> {
  const cutoff = new Date(deps.clock.now().getTime() - KEEP_MS);
  const requests = await deps.db.orm
    .delete(oauthRequests)
    .where(lt(oauthRequests.expiresAt, cutoff))
    .returning({ id: oauthRequests.id });
  const refreshTokens = await deps.db.orm
    .delete(oauthRefreshTokens)
    .where(
      or(
        lt(oauthRefreshTokens.expiresAt, cutoff),
        and(isNotNull(oauthRefreshTokens.usedAt), lt(oauthRefreshTokens.usedAt, cutoff)),
      ),
    )
    .returning({ id: oauthRefreshTokens.id });
  return { requests: requests.length, refreshTokens: refreshTokens.length };
}

export const oauthPruneJob = defineJob({
  name: OAUTH_PRUNE_JOB,
  schema: z.object({}),
  cronOnly: true,
  handle: async (_data, { deps }: { deps: Deps }) => {
    await pruneOauth(deps);
  },
});
