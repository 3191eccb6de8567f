import crypto from 'node:crypto';
import { expect } from 'vitest';
import { createSession, csrfTokenFor, SESSION_COOKIE } from '../src/areas/identity/sessions.ts';
import type { TestApp } from './harness.ts';
import { seedOrg } from './seed.ts';

// The OAuth authorization server's endpoints as a client and a signed-in user meet them, for the tests of
// src/areas/oauth (oauth.test.ts: metadata, registration, authorization; oauth-tokens.test.ts: tokens,
// grants, housekeeping). `t` is read at each call, so the helpers may be made before the app starts.

export const BASE = 'http://pier.test';
export const AUDIENCE = `${BASE}/mcp`;
export const REDIRECT = 'http://127.0.0.1:9/callback';

export function oauthFlow(t: () => TestApp) {
  const pkce = () => {
    const verifier = crypto.randomBytes(32).toString('base64url');
    return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
  };

  function form(fields: Record<string, string>) {
    return new URLSearchParams(fields).toString();
  }

  async function token(fields: Record<string, string>, headers: Record<string, string> = {}) {
    return t().app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: form(fields),
    });
  }

  async function register(body: unknown, remoteAddress = '10.0.0.1') {
    return t().app.inject({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
      remoteAddress,
    });
  }

  async function authorize(q: Record<string, string>) {
    return t().app.inject({
      method: 'GET',
      url: `/api/oauth/authorize?${form(q)}`,
      headers: { 'user-agent': 'TestAgent/1.0' },
      remoteAddress: '192.0.2.7',
    });
  }

  async function sessionFor(userId: string) {
    const { secret, session } = await createSession(t().deps, userId, { ip: '192.0.2.8' });
    return {
      cookie: `${SESSION_COOKIE}=${secret}`,
      call: (name: string, body: unknown) =>
        t().call(name, body, undefined, {
          cookie: `${SESSION_COOKIE}=${secret}`,
          'x-csrf-token': csrfTokenFor(t().deps, session.id),
        }),
    };
  }

  /** A registered public client, a signed-in owner of one organization, and a started request. */
  async function setup(extra: Record<string, unknown> = {}) {
    const { org, owner } = await seedOrg(t().deps);
    const reg = await register(
      { client_name: 'Agent Smith', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...extra },
      `10.1.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
    );
    expect(reg.statusCode).toBe(201);
    const client = reg.json() as { client_id: string; client_secret?: string };
    const session = await sessionFor(owner.user.id);
    return { org, owner, client, session };
  }

  /** Exchanges an approved code (with its PKCE verifier) at the token endpoint, as `s`'s client. */
  function exchangeCode(s: { client: { client_id: string } }, code: string, verifier: string) {
    return token({
      grant_type: 'authorization_code',
      client_id: s.client.client_id,
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
  }

  /** A refresh-token grant as `clientId`, with any extra fields (a resource). */
  function refreshGrant(clientId: string, refreshToken: string, extra: Record<string, string> = {}) {
    return token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: refreshToken, ...extra });
  }

  async function approvedCode(
    s: Awaited<ReturnType<typeof setup>>,
    environment = 'sandbox',
    resource = AUDIENCE,
  ) {
    const p = pkce();
    const res = await authorize({
      response_type: 'code',
      client_id: s.client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      resource,
      scope: 'mcp',
    });
    expect(res.statusCode).toBe(302);
    const consent = new URL(res.headers.location as string);
    expect(consent.origin + consent.pathname).toBe(`${BASE}/oauth/consent`);
    const requestId = consent.searchParams.get('request')!;
    const decided = await s.session.call('decideOauthRequestForCli', {
      requestId,
      approve: true,
      orgIds: [s.org.id],
      environment,
    });
    expect(decided.statusCode).toBe(200);
    const back = new URL(decided.json().redirectTo);
    return { code: back.searchParams.get('code')!, back, verifier: p.verifier, requestId };
  }

  return {
    pkce,
    form,
    token,
    register,
    authorize,
    sessionFor,
    setup,
    exchangeCode,
    refreshGrant,
    approvedCode,
  };
}
