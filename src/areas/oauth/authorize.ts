import crypto from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { mcpAudience as mcpResource } from '../mcp/index.ts';
import { type Client, findClient } from './clients.ts';
import { OAuthError } from './oauth-error.ts';
import { oauthRequests } from './tables.ts';

// GET /api/oauth/authorize: checks what the client asks for, keeps it as a pending request and sends the
// browser to the dashboard's consent page. RFC 6749 §4.1.2.1: while the client or its redirect URI is in
// doubt nothing is sent to that URI (the caller answers 400 here); after that every refusal goes back to
// the client as `?error=…&state=…`.

export const REQUEST_TTL_MS = 10 * 60 * 1000;
export const CODE_TTL_MS = 60 * 1000;
export const SCOPES = ['mcp'] as const;
export const AUTHORIZE_RULE = { limit: 60, windowSec: 60 };

/** The one resource Pier issues tokens for (RFC 8707): its MCP endpoint, as the mcp area names it. */
export function mcpAudience(deps: Deps): string {
  return mcpResource(deps.config.publicUrl);
}

/**
 * The audience a `resource` parameter asks for, or null when Pier issues no token for it. Besides /mcp
 * itself, the API's root resource (what /.well-known/oauth-protected-resource names, and what an MCP client
 * sends when the 401 pointed it there) is accepted and narrowed to /mcp: the only resource Pier's OAuth
 * tokens are for (docs/decisions/063-oauth-tokens-only-at-their-audience.md).
 */
export function audienceFor(deps: Deps, resource: string | undefined): string | null {
  const audience = mcpAudience(deps);
  if (resource === undefined || resource === audience || resource === deps.config.publicUrl) return audience;
  return null;
}

/** Raised once the redirect URI is trusted: the error travels to the client, with its state. */
export class RedirectableError extends Error {
  readonly location: string;
  constructor(location: string) {
    super('redirect');
    this.location = location;
  }
}

export function errorRedirect(
  deps: Deps,
  redirectUri: string,
  error: string,
  description: string,
  state?: string,
) {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (state) url.searchParams.set('state', state);
  url.searchParams.set('iss', deps.config.publicUrl);
  return url.toString();
}

type Query = Record<string, string | undefined>;

export async function startAuthorization(
  deps: Deps,
  q: Query,
  from: { ip: string; userAgent: string | undefined },
): Promise<{ consentUrl: string }> {
  // Anyone may start a request and each one is a row (and maybe a document fetch): bounded per address.
  const key = `oauth-authorize:${from.ip}`;
  try {
    await deps.limiter.assertUnder(key, AUTHORIZE_RULE);
  } catch {
    throw new OAuthError('too_many_requests', 'Too many authorization requests from this address.', 429, {
      'retry-after': String(AUTHORIZE_RULE.windowSec),
    });
  }
  await deps.limiter.hit(key, AUTHORIZE_RULE);
  const client: Client = await findClient(deps, q.client_id);
  if (!q.redirect_uri) throw new OAuthError('invalid_request', 'redirect_uri is required.');
  // Exact string match against a registered URI (OAuth 2.1 §2.3.1): no prefix, no normalisation.
  if (!client.redirectUris.includes(q.redirect_uri))
    throw new OAuthError(
      'invalid_request',
      'redirect_uri does not match any URI registered for this client.',
    );
  const state = q.state;
  const refuse = (error: string, description: string): never => {
    throw new RedirectableError(errorRedirect(deps, q.redirect_uri!, error, description, state));
  };
  if (state && state.length > 1000) refuse('invalid_request', 'state is longer than 1000 characters.');
  if (q.response_type !== 'code')
    refuse('unsupported_response_type', "Only response_type 'code' is supported.");
  if (!q.code_challenge) refuse('invalid_request', 'PKCE is required: send code_challenge with method S256.');
  if (q.code_challenge_method !== 'S256')
    refuse('invalid_request', "Only the PKCE method 'S256' is accepted ('plain' is refused).");
  if (!/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge!))
    refuse('invalid_request', 'code_challenge must be a base64url SHA-256 digest (43 characters).');
  const audience = audienceFor(deps, q.resource);
  if (!audience) refuse('invalid_target', `Tokens are issued for ${mcpAudience(deps)} only.`);
  // Requested scopes are not refused (RFC 6749 §3.3 lets the server grant fewer): a client that read the
  // API's root metadata asks for the platform scopes. It gets `mcp`, its reach chosen at consent.
  if (q.scope !== undefined && q.scope.length > 1000) refuse('invalid_scope', 'scope is too long.');
  const now = deps.clock.now();
  const [row] = await deps.db.orm
    .insert(oauthRequests)
    .values({
      clientId: client.clientId,
      clientName: client.name,
      clientKind: client.kind,
      redirectUri: q.redirect_uri,
      codeChallenge: q.code_challenge!,
      state: state ?? null,
      resource: audience!,
      scope: SCOPES.join(' '),
      sourceIp: from.ip,
      userAgent: from.userAgent?.slice(0, 300) ?? null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
    })
    .returning({ id: oauthRequests.id });
  return { consentUrl: `${deps.config.publicUrl}/oauth/consent?request=${row!.id}` };
}

/** A pending request still waiting for the user's decision (null when unknown, decided or expired). */
export async function pendingRequest(deps: Deps, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const [row] = await deps.db.orm
    .select()
    .from(oauthRequests)
    .where(and(eq(oauthRequests.id, id), isNull(oauthRequests.decidedAt)));
  if (!row || row.expiresAt.getTime() <= deps.clock.now().getTime()) return null;
  return row;
}

/** Records the decision once; approving mints the single-use code (only its HMAC is kept). */
export async function decide(
  deps: Deps,
  id: string,
  userId: string,
  d: { approve: true; orgIds: string[]; environment: 'sandbox' | 'production' } | { approve: false },
): Promise<string | null> {
  const row = await pendingRequest(deps, id);
  if (!row) return null;
  const now = deps.clock.now();
  const code = d.approve ? crypto.randomBytes(32).toString('base64url') : null;
  const claimed = await deps.db.orm
    .update(oauthRequests)
    .set({
      decidedAt: now,
      userId,
      ...(d.approve
        ? {
            orgIds: d.orgIds,
            environment: d.environment,
            codeHash: deps.keyring.hashSecret(code!),
            codeExpiresAt: new Date(now.getTime() + CODE_TTL_MS),
          }
        : {}),
    })
    .where(and(eq(oauthRequests.id, id), isNull(oauthRequests.decidedAt)))
    .returning({ id: oauthRequests.id });
  if (!claimed.length) return null;
  if (!d.approve)
    return errorRedirect(deps, row.redirectUri, 'access_denied', 'The user refused.', row.state ?? undefined);
  const url = new URL(row.redirectUri);
  url.searchParams.set('code', code!);
  if (row.state) url.searchParams.set('state', row.state);
  // RFC 9207: the client can tell which server answered (mix-up defence).
  url.searchParams.set('iss', deps.config.publicUrl);
  return url.toString();
}
