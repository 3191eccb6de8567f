import crypto from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { credentials } from '../../core/auth/tables.ts';
import type { Deps } from '../../deps.ts';
import { audienceFor } from './authorize.ts';
import { authenticateClient } from './clients.ts';
import { OAuthError } from './oauth-error.ts';
import { oauthGrants, oauthRefreshTokens, oauthRequests } from './tables.ts';

// POST /api/oauth/token and /api/oauth/revoke. An access token is a core credential of kind 'mcpat'
// (`mcpat.<keyId>.<secret>`, one hour) carrying its grant in meta, so it resolves through verifyCaller like
// any other token and a revocation reaches every node's cache at once; a refresh token (`mcprt_…`, 30 days)
// is single use: each refresh rotates it, and presenting a used one revokes the whole grant (OAuth 2.1
// §4.3.1, a stolen token replayed).

export const ACCESS_TTL_S = 3600;
const REFRESH_TTL_MS = 30 * 24 * 3600 * 1000;

/** PKCE S256 (RFC 7636 §4.2). */
function pkceChallenge(verifier: string): string {
  return crypto.createHash('sha256').update(verifier).digest('base64url');
}

type Grant = typeof oauthGrants.$inferSelect;

export type TokenResponse = {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
};

async function issueTokens(deps: Deps, grant: Grant): Promise<TokenResponse> {
  const now = deps.clock.now();
  const { token } = await deps.credentials.issue({
    kind: 'mcpat',
    userId: grant.userId,
    label: grant.clientName,
    expiresAt: new Date(now.getTime() + ACCESS_TTL_S * 1000),
    meta: {
      grantId: grant.id,
      clientId: grant.clientId,
      audience: grant.audience,
      orgIds: grant.orgIds,
      environment: grant.environment,
    },
  });
  const refresh = `mcprt_${crypto.randomBytes(32).toString('base64url')}`;
  await deps.db.orm.insert(oauthRefreshTokens).values({
    grantId: grant.id,
    tokenHash: deps.keyring.hashSecret(refresh),
    createdAt: now,
    expiresAt: new Date(now.getTime() + REFRESH_TTL_MS),
  });
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: ACCESS_TTL_S,
    refresh_token: refresh,
    scope: grant.scope,
  };
}

/** Ends a grant: its refresh tokens stop working and every access token is revoked (caches included). */
export async function revokeGrant(deps: Deps, grantId: string): Promise<void> {
  await deps.db.orm
    .update(oauthGrants)
    .set({ revokedAt: deps.clock.now() })
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)));
  await deps.db.orm
    .update(oauthRefreshTokens)
    .set({ usedAt: deps.clock.now() })
    .where(and(eq(oauthRefreshTokens.grantId, grantId), isNull(oauthRefreshTokens.usedAt)));
  const live = await deps.db.orm
    .select({ id: credentials.id })
    .from(credentials)
    .where(
      and(
        eq(credentials.kind, 'mcpat'),
        isNull(credentials.revokedAt),
        sql`${credentials.meta}->>'grantId' = ${grantId}`,
      ),
    );
  // CredentialService.revoke clears this node's cache and broadcasts to the others before it returns.
  for (const t of live) await deps.credentials.revoke(t.id);
}

function resourceMatches(deps: Deps, given: string | undefined, audience: string): void {
  if (audienceFor(deps, given) !== audience)
    throw new OAuthError('invalid_target', `This grant is for ${audience} only.`);
}

export async function exchangeCode(deps: Deps, body: Record<string, string>, authorization?: string) {
  const client = await authenticateClient(deps, body, authorization);
  if (!body.code) throw new OAuthError('invalid_request', 'code is required.');
  if (!body.code_verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(body.code_verifier))
    throw new OAuthError(
      'invalid_request',
      'code_verifier is required (43 to 128 characters of [A-Za-z0-9._~-]).',
    );
  if (body.code.length > 200) throw new OAuthError('invalid_grant', 'The code is not valid.');
  const [req] = await deps.db.orm
    .select()
    .from(oauthRequests)
    .where(eq(oauthRequests.codeHash, deps.keyring.hashSecret(body.code)));
  if (!req?.userId) throw new OAuthError('invalid_grant', 'The code is not valid.');
  if (req.usedAt) {
    // A code presented twice was intercepted somewhere: what it gave is withdrawn (RFC 6749 §4.1.2).
    if (req.grantId) await revokeGrant(deps, req.grantId);
    throw new OAuthError('invalid_grant', 'The code was already used.');
  }
  if (req.clientId !== client.clientId)
    throw new OAuthError('invalid_grant', 'The code was issued to another client.');
  if (body.redirect_uri !== req.redirectUri)
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request.');
  if (!req.codeExpiresAt || req.codeExpiresAt.getTime() <= deps.clock.now().getTime())
    throw new OAuthError('invalid_grant', 'The code has expired.');
  if (pkceChallenge(body.code_verifier) !== req.codeChallenge)
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code challenge.');
  resourceMatches(deps, body.resource, req.resource);
  const now = deps.clock.now();
  const claimed = await deps.db.orm
    .update(oauthRequests)
    .set({ usedAt: now })
    .where(and(eq(oauthRequests.id, req.id), isNull(oauthRequests.usedAt)))
    .returning({ id: oauthRequests.id });
  if (!claimed.length) throw new OAuthError('invalid_grant', 'The code was already used.');
  const [grant] = await deps.db.orm
    .insert(oauthGrants)
    .values({
      userId: req.userId,
      clientId: req.clientId,
      clientName: req.clientName,
      redirectUri: req.redirectUri,
      audience: req.resource,
      scope: req.scope,
      orgIds: req.orgIds,
      environment: req.environment,
      createdAt: now,
    })
    .returning();
  await deps.db.orm.update(oauthRequests).set({ grantId: grant!.id }).where(eq(oauthRequests.id, req.id));
  return issueTokens(deps, grant!);
}

export async function refresh(deps: Deps, body: Record<string, string>, authorization?: string) {
  const client = await authenticateClient(deps, body, authorization);
  if (!body.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required.');
  if (body.refresh_token.length > 200)
    throw new OAuthError('invalid_grant', 'The refresh token is not valid.');
  const [rt] = await deps.db.orm
    .select()
    .from(oauthRefreshTokens)
    .where(eq(oauthRefreshTokens.tokenHash, deps.keyring.hashSecret(body.refresh_token)));
  if (!rt) throw new OAuthError('invalid_grant', 'The refresh token is not valid.');
  const [grant] = await deps.db.orm.select().from(oauthGrants).where(eq(oauthGrants.id, rt.grantId));
  if (!grant || grant.revokedAt) throw new OAuthError('invalid_grant', 'The grant was revoked.');
  if (grant.clientId !== client.clientId)
    throw new OAuthError('invalid_grant', 'The refresh token belongs to another client.');
  if (rt.usedAt) {
    await revokeGrant(deps, grant.id);
    throw new OAuthError('invalid_grant', 'The refresh token was already used; the grant is revoked.');
  }
  const now = deps.clock.now();
  if (rt.expiresAt.getTime() <= now.getTime())
    throw new OAuthError('invalid_grant', 'The refresh token has expired.');
  resourceMatches(deps, body.resource, grant.audience);
  const claimed = await deps.db.orm
    .update(oauthRefreshTokens)
    .set({ usedAt: now })
    .where(and(eq(oauthRefreshTokens.id, rt.id), isNull(oauthRefreshTokens.usedAt)))
    .returning({ id: oauthRefreshTokens.id });
  if (!claimed.length) {
    await revokeGrant(deps, grant.id);
    throw new OAuthError('invalid_grant', 'The refresh token was already used; the grant is revoked.');
  }
  await deps.db.orm.update(oauthGrants).set({ refreshedAt: now }).where(eq(oauthGrants.id, grant.id));
  return issueTokens(deps, grant);
}

/** RFC 7009: a refresh token ends its grant, an access token itself; unknown tokens are not an error. */
export async function revokeToken(deps: Deps, body: Record<string, string>, authorization?: string) {
  const client = await authenticateClient(deps, body, authorization);
  const token = body.token ?? '';
  if (token.startsWith('mcprt_')) {
    const [rt] = await deps.db.orm
      .select({ grantId: oauthRefreshTokens.grantId, clientId: oauthGrants.clientId })
      .from(oauthRefreshTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthRefreshTokens.grantId))
      .where(eq(oauthRefreshTokens.tokenHash, deps.keyring.hashSecret(token)));
    if (rt && rt.clientId === client.clientId) await revokeGrant(deps, rt.grantId);
    return;
  }
  const v = await deps.credentials.verifyCaller(token);
  if (v?.row.kind === 'mcpat' && v.row.meta.clientId === client.clientId)
    await deps.credentials.revoke(v.row.id);
}
