import crypto from 'node:crypto';
import type { IntegrationClientConfig } from '../../config.ts';
import { ApiError } from '../../core/errors.ts';
import type { OutboundAllow } from '../../core/net/outbound-allow.ts';
import { type SafeResponse, safeFetch } from '../../core/net/safe-fetch.ts';
import { fillTemplate } from './connection-config.ts';
import type { Connector, OAuthSpec, TokenSet } from './connectors/types.ts';

// The OAuth 2.0 authorization-code flow with each provider's quirks taken from its connector data: PKCE
// (S256) where supported, client authentication in the body or as HTTP Basic, form or JSON token bodies.
// Every request goes through the SSRF guard with the operator's OUTBOUND_ALLOW.

export type Client = { clientId: string; clientSecret: string };

/**
 * The provider URLs after the operator's overrides (INTEGRATIONS_<SLUG>_AUTH_URL, …), with the connection's
 * variables filled in (overrides may hold placeholders too).
 */
export function providerUrls(c: Connector, o: IntegrationClientConfig, vars: Record<string, string> = {}) {
  const fill = (u: string) => fillTemplate(c, u, vars);
  const apiUrl = fill(o.apiUrl ?? c.apiUrl).replace(/\/+$/, '');
  const tokenUrl = c.oauth ? fill(o.tokenUrl ?? c.oauth.tokenUrl) : '';
  const revoke = c.oauth?.revokeUrl ? new URL(fill(c.oauth.revokeUrl)) : null;
  return {
    authUrl: c.oauth ? fill(o.authUrl ?? c.oauth.authUrl) : '',
    revokeUrl: revoke
      ? o.tokenUrl
        ? new URL(revoke.pathname, tokenUrl).toString()
        : revoke.toString()
      : null,
    tokenUrl,
    apiUrl,
    contentUrl: fill(o.contentUrl ?? c.contentUrl ?? apiUrl).replace(/\/+$/, ''),
  };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizationUrl(
  c: Connector,
  authUrl: string,
  p: { clientId: string; redirectUri: string; state: string; challenge?: string },
): string {
  const o = c.oauth as OAuthSpec;
  const url = new URL(authUrl);
  url.searchParams.set('client_id', p.clientId);
  url.searchParams.set('redirect_uri', p.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('state', p.state);
  if (o.scopes.length) url.searchParams.set(o.scopeParam ?? 'scope', o.scopes.join(o.scopeSeparator));
  if (p.challenge) {
    url.searchParams.set('code_challenge', p.challenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  for (const [k, v] of Object.entries(o.extraAuthParams ?? {})) url.searchParams.set(k, v);
  return url.toString();
}

/** A refusal from the token endpoint: `invalid_grant` and friends (the grant is dead) vs. the rest. */
export class TokenRefused extends Error {
  readonly grantDead: boolean;
  constructor(message: string, grantDead: boolean) {
    super(message);
    this.grantDead = grantDead;
  }
}

export async function tokenRequest(
  c: Connector,
  tokenUrl: string,
  client: Client,
  params: Record<string, string>,
  outboundAllow: OutboundAllow,
): Promise<TokenSet> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const fields: Record<string, string> = { ...params };
  const o = c.oauth as OAuthSpec;
  if (o.clientAuth === 'basic') {
    headers.authorization = basicAuth(client);
  } else {
    fields.client_id = client.clientId;
    fields.client_secret = client.clientSecret;
  }
  let body: string;
  if (o.tokenBody === 'json') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(fields);
  } else {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(fields).toString();
  }
  let res: SafeResponse;
  try {
    res = await safeFetch(tokenUrl, {
      method: 'POST',
      headers,
      body,
      timeoutMs: 20_000,
      maxBytes: 256 * 1024,
      maxRedirects: 0,
      outboundAllow,
    });
  } catch (err) {
    if (err instanceof ApiError)
      throw new TokenRefused(`the token endpoint could not be reached (${err.code})`, false);
    throw err;
  }
  let json: Record<string, unknown> = {};
  try {
    json = res.json<Record<string, unknown>>();
  } catch {
    // Some token endpoints answer form-encoded bodies (GitHub-style); read them too.
    json = Object.fromEntries(new URLSearchParams(res.text()));
  }
  const oauthError = typeof json.error === 'string' ? json.error : null;
  if (!res.ok || oauthError) {
    const description = typeof json.error_description === 'string' ? json.error_description : null;
    const what = [oauthError, description].filter(Boolean).join(': ') || `HTTP ${res.status}`;
    const dead = [
      'invalid_grant',
      'invalid_token',
      'token_revoked',
      'token_expired',
      'invalid_refresh_token',
    ].includes(oauthError ?? '');
    throw new TokenRefused(what.slice(0, 300), dead || res.status === 400 || res.status === 401);
  }
  const parsed = c.parseToken ? c.parseToken(json) : standardToken(json);
  if (!parsed.accessToken) throw new TokenRefused('the token endpoint answered no access_token', false);
  return parsed;
}

export function standardToken(json: Record<string, unknown>): TokenSet {
  const expiresIn = Number(json.expires_in);
  const { access_token, refresh_token, id_token, ...extra } = json;
  return {
    accessToken: typeof access_token === 'string' ? access_token : '',
    refreshToken: typeof refresh_token === 'string' ? refresh_token : undefined,
    expiresInSec: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined,
    extra,
  };
}

/** RFC 7009 revocation; the caller ignores failures (the tokens are deleted either way). */
export async function revokeToken(
  c: Connector,
  url: string,
  token: string,
  client: Client,
  outboundAllow: OutboundAllow,
): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (c.oauth?.clientAuth === 'basic') headers.authorization = basicAuth(client);
  await safeFetch(url, {
    method: 'POST',
    headers,
    body: new URLSearchParams({ token }).toString(),
    timeoutMs: 10_000,
    maxRedirects: 0,
    outboundAllow,
  });
}

const basicAuth = (client: Client) =>
  `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`;
