import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { randomBase62, safeEqual } from '../../core/crypto.ts';
import { safeFetch } from '../../core/net/safe-fetch.ts';
import type { Deps } from '../../deps.ts';
import { OAuthError } from './oauth-error.ts';
import { oauthClients } from './tables.ts';

// Who may ask for a token. Two ways to be a client (MCP authorization, 2025-11-25):
// - a Client ID Metadata Document: the client_id is an https URL whose JSON names the client and its
//   redirect URIs; Pier fetches it through the SSRF guard on every authorization request (they are rare),
//   so a client that changes its document is read afresh and nothing of it is kept but the grant;
// - Dynamic Client Registration (RFC 7591): POST /api/oauth/register, rate-limited per address.

export type Client = {
  clientId: string;
  name: string;
  kind: 'cimd' | 'dcr';
  redirectUris: string[];
  authMethod: 'none' | 'client_secret_post' | 'client_secret_basic';
  secretHash: string | null;
};

const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;
export const DCR_RULE = { limit: 10, windowSec: 600 };
const CIMD_MAX_BYTES = 16 * 1024;
const CIMD_TIMEOUT_MS = 5_000;
const MAX_REDIRECT_URIS = 10;

/** A client_id that is a URL is a metadata document's address: https, a path, no fragment or credentials. */
export function isMetadataUrl(clientId: string): boolean {
  return /^https:\/\//i.test(clientId);
}

function parseMetadataUrl(clientId: string): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new OAuthError('invalid_client', 'The client_id is not a valid URL.');
  }
  if (url.protocol !== 'https:' || url.pathname === '/' || url.hash || url.username || url.password)
    throw new OAuthError(
      'invalid_client',
      'A URL client_id must be https, with a path, and without a fragment or credentials.',
    );
  return url;
}

/** Redirect URIs: absolute, no fragment; https, or http only on this computer (native and CLI clients). */
export function checkRedirectUri(uri: unknown): string {
  if (typeof uri !== 'string' || uri.length > 2000)
    throw new OAuthError('invalid_redirect_uri', 'A redirect URI must be a URL of at most 2000 characters.');
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new OAuthError('invalid_redirect_uri', `The redirect URI '${uri.slice(0, 200)}' is not a URL.`);
  }
  if (url.hash) throw new OAuthError('invalid_redirect_uri', 'A redirect URI may not carry a fragment.');
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol === 'http:' && !loopback)
    throw new OAuthError(
      'invalid_redirect_uri',
      'A redirect URI must be https (http only on 127.0.0.1, localhost or [::1]).',
    );
  if (url.protocol === 'javascript:' || url.protocol === 'data:' || url.protocol === 'file:')
    throw new OAuthError('invalid_redirect_uri', `A redirect URI may not use ${url.protocol}`);
  return uri;
}

function clientName(v: unknown, fallback: string): string {
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !v.trim() || v.length > 100)
    throw new OAuthError('invalid_client_metadata', 'client_name must be a string of 1 to 100 characters.');
  return v.trim();
}

function redirectUris(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_REDIRECT_URIS)
    throw new OAuthError('invalid_redirect_uri', `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URIs.`);
  return v.map(checkRedirectUri);
}

/** Fetches and checks a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document). */
async function fetchMetadataDocument(deps: Deps, clientId: string): Promise<Client> {
  const url = parseMetadataUrl(clientId);
  let doc: Record<string, unknown>;
  try {
    const res = await safeFetch(url, {
      outboundAllow: deps.config.outboundAllow,
      timeoutMs: CIMD_TIMEOUT_MS,
      maxBytes: CIMD_MAX_BYTES,
      // The document's address is the client's identity: a redirect would make it someone else's.
      maxRedirects: 0,
      headers: { accept: 'application/json' },
    });
    if (!res.ok) throw new Error(`status ${res.status}`);
    doc = res.json<Record<string, unknown>>();
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not a JSON object');
  } catch (e) {
    const why = e instanceof Error ? e.message : 'unreadable';
    throw new OAuthError(
      'invalid_client',
      `The client metadata document could not be used (${why.slice(0, 200)}).`,
    );
  }
  if (doc.client_id !== clientId)
    throw new OAuthError('invalid_client', 'The client metadata document names another client_id.');
  const method = doc.token_endpoint_auth_method ?? 'none';
  if (method !== 'none')
    throw new OAuthError(
      'invalid_client',
      "A metadata-document client must use token_endpoint_auth_method 'none'.",
    );
  if ('client_secret' in doc)
    throw new OAuthError('invalid_client', 'A client metadata document may not hold a client_secret.');
  let uris: string[];
  let name: string;
  try {
    uris = redirectUris(doc.redirect_uris);
    name = clientName(doc.client_name, url.host);
  } catch (e) {
    throw new OAuthError(
      'invalid_client',
      `The client metadata document is invalid: ${(e as Error).message}`,
    );
  }
  return { clientId, name, kind: 'cimd', redirectUris: uris, authMethod: 'none', secretHash: null };
}

/** The client behind a client_id, or invalid_client. */
export async function findClient(deps: Deps, clientId: string | undefined): Promise<Client> {
  if (!clientId || clientId.length > 2000) throw new OAuthError('invalid_request', 'client_id is required.');
  if (isMetadataUrl(clientId)) return fetchMetadataDocument(deps, clientId);
  const [row] = await deps.db.orm.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
  if (!row) throw new OAuthError('invalid_client', 'The client is not registered.');
  return {
    clientId: row.clientId,
    name: row.name,
    kind: 'dcr',
    redirectUris: row.redirectUris,
    authMethod: row.authMethod as Client['authMethod'],
    secretHash: row.secretHash,
  };
}

/**
 * Client authentication at the token endpoint. Public clients (metadata documents, DCR with 'none') only
 * name themselves, PKCE binds the code; confidential DCR clients must present their secret as registered.
 */
export async function authenticateClient(
  deps: Deps,
  body: Record<string, string>,
  authorization: string | undefined,
): Promise<Client> {
  let id = body.client_id;
  let secret = body.client_secret;
  let viaBasic = false;
  const basic = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    if (at < 0) throw new OAuthError('invalid_client', 'Malformed Basic client credentials.', 401);
    id = decodeURIComponent(decoded.slice(0, at));
    secret = decodeURIComponent(decoded.slice(at + 1));
    viaBasic = true;
  }
  if (!id) throw new OAuthError('invalid_client', 'client_id is required.', 401);
  // A metadata-document client is public: the code's PKCE binding is its proof, no fetch is needed here.
  const client = isMetadataUrl(id)
    ? ({
        clientId: id,
        name: '',
        kind: 'cimd',
        redirectUris: [],
        authMethod: 'none',
        secretHash: null,
      } as Client)
    : await findClient(deps, id).catch((e: unknown) => {
        throw e instanceof OAuthError ? new OAuthError('invalid_client', e.message, 401) : e;
      });
  if (client.authMethod === 'none') {
    if (secret) throw new OAuthError('invalid_client', 'This client is public: it has no secret.', 401);
    return client;
  }
  const expected = client.authMethod === 'client_secret_basic';
  if (!secret || viaBasic !== expected || !client.secretHash)
    throw new OAuthError('invalid_client', `Authenticate with ${client.authMethod}.`, 401);
  if (!safeEqual(client.secretHash, deps.keyring.hashSecret(secret)))
    throw new OAuthError('invalid_client', 'The client secret is wrong.', 401);
  return client;
}

/** RFC 7591 registration. The secret (confidential clients) is returned once; only its HMAC is kept. */
export async function registerClient(deps: Deps, body: unknown, ip: string) {
  const key = `oauth-dcr:${ip}`;
  try {
    await deps.limiter.assertUnder(key, DCR_RULE);
  } catch (e) {
    const retry = (e as { headers?: Record<string, string> }).headers?.['retry-after'] ?? '60';
    throw new OAuthError(
      'too_many_requests',
      `Too many registrations from this address; retry in ${retry} s.`,
      429,
      {
        'retry-after': retry,
      },
    );
  }
  await deps.limiter.hit(key, DCR_RULE);
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new OAuthError('invalid_client_metadata', 'Send the client metadata as a JSON object.');
  const m = body as Record<string, unknown>;
  const uris = redirectUris(m.redirect_uris);
  const name = clientName(m.client_name, new URL(uris[0]!).host);
  const method = m.token_endpoint_auth_method ?? 'client_secret_basic';
  if (!AUTH_METHODS.includes(method as (typeof AUTH_METHODS)[number]))
    throw new OAuthError(
      'invalid_client_metadata',
      `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}.`,
    );
  const grants = m.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))
    throw new OAuthError(
      'invalid_client_metadata',
      'grant_types may only hold authorization_code and refresh_token.',
    );
  const responses = m.response_types ?? ['code'];
  if (!Array.isArray(responses) || responses.some((r) => r !== 'code'))
    throw new OAuthError('invalid_client_metadata', "response_types may only hold 'code'.");
  const clientId = `pierc_${randomBase62(24)}`;
  const secret = method === 'none' ? null : `piercs_${crypto.randomBytes(32).toString('base64url')}`;
  const now = deps.clock.now();
  await deps.db.orm.insert(oauthClients).values({
    clientId,
    name,
    redirectUris: uris,
    authMethod: method as string,
    secretHash: secret ? deps.keyring.hashSecret(secret) : null,
    metadata: { grant_types: grants, response_types: responses },
    registeredFrom: ip,
    createdAt: now,
  });
  return {
    client_id: clientId,
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: name,
    redirect_uris: uris,
    token_endpoint_auth_method: method,
    grant_types: grants,
    response_types: responses,
  };
}
