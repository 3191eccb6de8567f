import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedOrg, seedUser } from '../../../test/seed.ts';
import { acceptAudience } from '../../core/auth/resolve.ts';
import type { ManualClock } from '../../core/clock.ts';
import { createSession, csrfTokenFor, SESSION_COOKIE } from '../identity/sessions.ts';
import { pruneOauth } from './prune.ts';

// The authorization server through its HTTP endpoints on PGlite and PostgreSQL: metadata, registration,
// every refusal of /authorize, consent through the dashboard's functions, code exchange, the token at work
// (and refused outside /mcp), rotation, reuse, revocation. The whole flow with the SDK's client and
// Chromium is test/e2e/browser/oauth.test.ts.

const BASE = 'http://pier.test';
const AUDIENCE = `${BASE}/mcp`;
const REDIRECT = 'http://127.0.0.1:9/callback';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const pkce = () => {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
};

function form(fields: Record<string, string>) {
  return new URLSearchParams(fields).toString();
}

async function token(fields: Record<string, string>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: form(fields),
  });
}

async function register(body: unknown, remoteAddress = '10.0.0.1') {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/register',
    headers: { 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    remoteAddress,
  });
}

async function authorize(q: Record<string, string>) {
  return t.app.inject({
    method: 'GET',
    url: `/api/oauth/authorize?${form(q)}`,
    headers: { 'user-agent': 'TestAgent/1.0' },
    remoteAddress: '192.0.2.7',
  });
}

async function sessionFor(userId: string) {
  const { secret, session } = await createSession(t.deps, userId, { ip: '192.0.2.8' });
  return {
    cookie: `${SESSION_COOKIE}=${secret}`,
    call: (name: string, body: unknown) =>
      t.call(name, body, undefined, {
        cookie: `${SESSION_COOKIE}=${secret}`,
        'x-csrf-token': csrfTokenFor(t.deps, session.id),
      }),
  };
}

/** A registered public client, a signed-in owner of one organization, and a started request. */
async function setup(extra: Record<string, unknown> = {}) {
  const { org, owner } = await seedOrg(t.deps);
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

describe('metadata', () => {
  it('publishes RFC 8414 metadata and names Pier as the authorization server of /mcp', async () => {
    const as = (await t.app.inject({ url: '/.well-known/oauth-authorization-server' })).json();
    expect(as).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/api/oauth/authorize`,
      token_endpoint: `${BASE}/api/oauth/token`,
      registration_endpoint: `${BASE}/api/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
    const root = (await t.app.inject({ url: '/.well-known/oauth-protected-resource' })).json();
    expect(root.authorization_servers).toEqual([BASE]);
    const mcp = (await t.app.inject({ url: '/.well-known/oauth-protected-resource/mcp' })).json();
    expect(mcp).toMatchObject({ resource: AUDIENCE, authorization_servers: [BASE] });
  });
});

describe('dynamic client registration', () => {
  it('registers a confidential client whose secret is stored only as a hash', async () => {
    const res = await register(
      { client_name: 'CI bot', redirect_uris: ['https://bot.example/cb'] },
      '10.2.0.1',
    );
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ client_name: 'CI bot', token_endpoint_auth_method: 'client_secret_basic' });
    expect(body.client_secret).toMatch(/^piercs_/);
    const { rows } = await t.deps.db.query<{ secret_hash: string }>(
      'SELECT secret_hash FROM oauth_clients WHERE client_id = $1',
      [body.client_id],
    );
    expect(rows[0]!.secret_hash).not.toContain(body.client_secret);
    expect(rows[0]!.secret_hash).not.toBe(body.client_secret);
  });

  it('refuses bad metadata with RFC 7591 error bodies', async () => {
    const cases: [unknown, string][] = [
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://a.example/cb#frag'] }, 'invalid_redirect_uri'],
      [
        { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt' },
        'invalid_client_metadata',
      ],
      [
        { redirect_uris: ['https://a.example/cb'], grant_types: ['client_credentials'] },
        'invalid_client_metadata',
      ],
      [{ redirect_uris: ['https://a.example/cb'], client_name: '' }, 'invalid_client_metadata'],
      [[1, 2], 'invalid_client_metadata'],
      ['{not json', 'invalid_request'],
    ];
    for (const [body, error] of cases) {
      const res = await register(body, '10.3.0.1');
      expect({ status: res.statusCode, error: res.json().error }).toEqual({ status: 400, error });
      expect(typeof res.json().error_description).toBe('string');
    }
  });

  it('is rate-limited per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push((await register({ redirect_uris: ['https://a.example/cb'] }, '10.4.0.1')).statusCode);
    expect(statuses.slice(0, 10).every((s) => s === 201)).toBe(true);
    const last = await register({ redirect_uris: ['https://a.example/cb'] }, '10.4.0.1');
    expect(last.statusCode).toBe(429);
    expect(last.json().error).toBe('too_many_requests');
    expect(last.headers['retry-after']).toBeDefined();
    // Another address is not affected.
    expect((await register({ redirect_uris: ['https://a.example/cb'] }, '10.4.0.2')).statusCode).toBe(201);
  });
});

describe('authorization requests', () => {
  it('answers 400 without redirecting when the client or its redirect URI is in doubt', async () => {
    const s = await setup();
    const p = pkce();
    const base = {
      response_type: 'code',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      state: 'x',
    };
    const unknown = await authorize({ ...base, client_id: 'pierc_nope', redirect_uri: REDIRECT });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toBe('invalid_client');
    const mismatch = await authorize({
      ...base,
      client_id: s.client.client_id,
      redirect_uri: 'http://127.0.0.1:9/callback/',
    });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json()).toMatchObject({ error: 'invalid_request' });
    expect(mismatch.headers.location).toBeUndefined();
    const missing = await authorize({ ...base, client_id: s.client.client_id });
    expect(missing.statusCode).toBe(400);
  });

  it('sends plain PKCE, a missing challenge and a wrong audience back as errors with the state', async () => {
    const s = await setup();
    const p = pkce();
    const base = {
      response_type: 'code',
      client_id: s.client.client_id,
      redirect_uri: REDIRECT,
      state: 'keep-me',
    };
    const cases: [Record<string, string>, string][] = [
      [{ code_challenge: p.verifier, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: p.challenge }, 'invalid_request'],
      [{}, 'invalid_request'],
      [
        { code_challenge: p.challenge, code_challenge_method: 'S256', resource: 'https://other.example/mcp' },
        'invalid_target',
      ],
      [
        { code_challenge: p.challenge, code_challenge_method: 'S256', resource: `${BASE}/mcp/` },
        'invalid_target',
      ],
      [
        { code_challenge: p.challenge, code_challenge_method: 'S256', response_type: 'token' },
        'unsupported_response_type',
      ],
    ];
    for (const [q, error] of cases) {
      const res = await authorize({ ...base, ...q });
      expect(res.statusCode).toBe(302);
      const loc = new URL(res.headers.location as string);
      expect(loc.origin + loc.pathname).toBe(REDIRECT);
      expect({ error: loc.searchParams.get('error'), state: loc.searchParams.get('state') }).toEqual({
        error,
        state: 'keep-me',
      });
    }
  });

  it('fetches a metadata-document client only through the SSRF guard', async () => {
    const q = {
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    };
    // No OUTBOUND_ALLOW in this app: a loopback document is never fetched.
    const blocked = await authorize({ ...q, client_id: 'https://127.0.0.1:9/client.json' });
    expect(blocked.statusCode).toBe(400);
    expect(blocked.json().error).toBe('invalid_client');
    expect(blocked.json().error_description).toMatch(/could not be used/);
    const rootPath = await authorize({ ...q, client_id: 'https://client.example/' });
    expect([rootPath.statusCode, rootPath.json().error]).toEqual([400, 'invalid_client']);
  });

  it('bounds how many requests one address may start', async () => {
    const q = { response_type: 'code', client_id: 'pierc_none', redirect_uri: REDIRECT };
    const from = (i: number) =>
      t.app.inject({
        method: 'GET',
        url: `/api/oauth/authorize?${form(q)}&n=${i}`,
        remoteAddress: '198.51.100.9',
      });
    for (let i = 0; i < 60; i++) expect((await from(i)).statusCode).toBe(400);
    const over = await from(60);
    expect([over.statusCode, over.json().error]).toEqual([429, 'too_many_requests']);
    expect(over.headers['retry-after']).toBe('60');
  });

  it('shows the consent page what it needs, and a refusal goes back as access_denied', async () => {
    const s = await setup();
    const p = pkce();
    const res = await authorize({
      response_type: 'code',
      client_id: s.client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      state: 's2',
    });
    const requestId = new URL(res.headers.location as string).searchParams.get('request')!;
    const view = await s.session.call('getOauthRequestForCli', { requestId });
    expect(view.statusCode).toBe(200);
    expect(view.json()).toMatchObject({
      client: { name: 'Agent Smith', kind: 'dcr' },
      redirectHost: '127.0.0.1:9',
      resource: AUDIENCE,
      requestedFrom: { ip: '192.0.2.7', userAgent: 'TestAgent/1.0' },
      orgs: [{ id: s.org.id, role: 'owner' }],
    });
    // Someone else's organization cannot be granted; a personal token cannot consent.
    const other = await seedOrg(t.deps);
    const foreign = await s.session.call('decideOauthRequestForCli', {
      requestId,
      approve: true,
      orgIds: [other.org.id],
    });
    expect(foreign.statusCode).toBe(404);
    const byToken = await t.call(
      'decideOauthRequestForCli',
      { requestId, approve: true, orgIds: [s.org.id] },
      s.owner.token,
    );
    expect(byToken.statusCode).toBe(403);
    const denied = await s.session.call('decideOauthRequestForCli', { requestId, approve: false });
    const back = new URL(denied.json().redirectTo);
    expect([back.searchParams.get('error'), back.searchParams.get('state')]).toEqual(['access_denied', 's2']);
    // Decided once.
    expect((await s.session.call('getOauthRequestForCli', { requestId })).statusCode).toBe(404);
  });
});

describe('tokens', () => {
  it('exchanges a code once, with the right verifier and redirect URI, for a token that works only at /mcp', async () => {
    const s = await setup();
    const { code, back, verifier } = await approvedCode(s);
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(BASE);
    const base = {
      grant_type: 'authorization_code',
      client_id: s.client.client_id,
      code,
      redirect_uri: REDIRECT,
    };
    const wrongVerifier = await token({ ...base, code_verifier: pkce().verifier });
    expect([wrongVerifier.statusCode, wrongVerifier.json().error]).toEqual([400, 'invalid_grant']);
    const wrongRedirect = await token({
      ...base,
      code_verifier: verifier,
      redirect_uri: 'http://127.0.0.1:9/other',
    });
    expect([wrongRedirect.statusCode, wrongRedirect.json().error]).toEqual([400, 'invalid_grant']);
    const wrongResource = await token({
      ...base,
      code_verifier: verifier,
      resource: 'https://other.example/mcp',
    });
    expect([wrongResource.statusCode, wrongResource.json().error]).toEqual([400, 'invalid_target']);
    const ok = await token({ ...base, code_verifier: verifier, resource: AUDIENCE });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
    const tokens = ok.json();
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'mcp' });
    expect(tokens.access_token).toMatch(/^mcpat\.[A-Za-z0-9]+\.[A-Za-z0-9_-]+$/);

    const v = await t.deps.credentials.verifyCaller(tokens.access_token);
    expect(v?.caller).toMatchObject({
      kind: 'user',
      userId: s.owner.user.id,
      via: 'oauth',
      label: 'Agent Smith',
      oauth: { clientId: s.client.client_id, audience: AUDIENCE, orgIds: [s.org.id], environment: 'sandbox' },
    });
    expect(acceptAudience(v!.caller, { audience: AUDIENCE })).not.toBeNull();
    expect(acceptAudience(v!.caller, { audience: `${BASE}/other` })).toBeNull();
    expect(acceptAudience(v!.caller)).toBeNull();
    // Outside /mcp the token is no credential: the function API and v1 answer 401, twice (cached path too).
    for (let i = 0; i < 2; i++) {
      const fnRes = await t.call('listMyOrgsForCli', {}, tokens.access_token);
      expect(fnRes.statusCode).toBe(401);
    }
    const v1 = await t.v1('GET', '/mail/emails/00000000-0000-4000-8000-000000000000', tokens.access_token);
    expect(v1.statusCode).toBe(401);
    // Stored as hashes only.
    const { rows } = await t.deps.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM oauth_refresh_tokens WHERE token_hash = $1 OR token_hash LIKE 'mcprt_%'",
      [tokens.refresh_token],
    );
    expect(rows[0]!.n).toBe(0);
    // A replayed code is refused and withdraws what it gave.
    const replay = await token({ ...base, code_verifier: verifier });
    expect([replay.statusCode, replay.json().error]).toEqual([400, 'invalid_grant']);
    expect(await t.deps.credentials.verifyCaller(tokens.access_token)).toBeNull();
  });

  it('rotates refresh tokens; a used one is refused and ends the grant', async () => {
    const s = await setup();
    // The API's root resource (what the root metadata names) is narrowed to /mcp.
    const { code, verifier } = await approvedCode(s, 'production', BASE);
    const first = (await exchangeCode(s, code, verifier)).json();
    const second = await refreshGrant(s.client.client_id, first.refresh_token, { resource: AUDIENCE });
    expect(second.statusCode).toBe(200);
    const rotated = second.json();
    expect(rotated.refresh_token).not.toBe(first.refresh_token);
    expect((await t.deps.credentials.verifyCaller(rotated.access_token))?.caller).toMatchObject({
      oauth: { environment: 'production', audience: AUDIENCE },
    });
    const otherClient = await register(
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
      '10.5.0.1',
    );
    const stolen = await refreshGrant(otherClient.json().client_id, rotated.refresh_token);
    expect([stolen.statusCode, stolen.json().error]).toEqual([400, 'invalid_grant']);
    const old = await refreshGrant(s.client.client_id, first.refresh_token);
    expect([old.statusCode, old.json().error]).toEqual([400, 'invalid_grant']);
    expect(await t.deps.credentials.verifyCaller(rotated.access_token)).toBeNull();
    const after = await refreshGrant(s.client.client_id, rotated.refresh_token);
    expect(after.json().error).toBe('invalid_grant');
  });

  it('authenticates confidential clients as registered', async () => {
    const s = await setup({ token_endpoint_auth_method: 'client_secret_basic' });
    const { code, verifier } = await approvedCode(s);
    const base = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
    const basic = (secret: string) => ({
      authorization: `Basic ${Buffer.from(`${s.client.client_id}:${secret}`).toString('base64')}`,
    });
    const none = await token({ ...base, client_id: s.client.client_id });
    expect([none.statusCode, none.json().error]).toEqual([401, 'invalid_client']);
    const wrong = await token(base, basic('piercs_wrong'));
    expect([wrong.statusCode, wrong.json().error]).toEqual([401, 'invalid_client']);
    const ok = await token(base, basic(s.client.client_secret!));
    expect(ok.statusCode).toBe(200);
  });

  it('answers malformed token requests with OAuth errors, never 500', async () => {
    const cases: [Record<string, string>, number, string][] = [
      [{}, 400, 'invalid_request'],
      [{ grant_type: 'password', client_id: 'x' }, 400, 'unsupported_grant_type'],
      [
        {
          grant_type: 'authorization_code',
          client_id: 'pierc_unknown',
          code: 'x',
          code_verifier: 'a'.repeat(43),
        },
        401,
        'invalid_client',
      ],
      [
        {
          grant_type: 'refresh_token',
          client_id: 'https://c.example/meta.json',
          refresh_token: 'mcprt_nope',
        },
        400,
        'invalid_grant',
      ],
    ];
    for (const [fields, status, error] of cases) {
      const res = await token(fields);
      expect({ status: res.statusCode, error: res.json().error }).toEqual({ status, error });
    }
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: '{bad',
    });
    expect([json.statusCode, json.json().error]).toEqual([400, 'invalid_request']);
    const dup = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=a&grant_type=b',
    });
    expect([dup.statusCode, dup.json().error]).toEqual([400, 'invalid_request']);
  });
});

describe('granted clients', () => {
  it('are listed with their organizations and last use, and revoking ends access at once', async () => {
    const s = await setup();
    const { code, verifier } = await approvedCode(s);
    const tokens = (await exchangeCode(s, code, verifier)).json();
    expect(await t.deps.credentials.verifyCaller(tokens.access_token)).not.toBeNull();
    // The verification above marked the token used (written off the request path).
    await new Promise((r) => setTimeout(r, 50));
    const list = await s.session.call('listOauthGrantsForCli', {});
    expect(list.statusCode).toBe(200);
    const [grant] = list.json();
    expect(grant).toMatchObject({
      clientName: 'Agent Smith',
      redirectHost: '127.0.0.1:9',
      environment: 'sandbox',
      orgs: [{ id: s.org.id }],
    });
    expect(grant.lastUsedAt).not.toBeNull();
    // Another user cannot see or revoke it.
    const stranger = await seedUser(t.deps);
    expect((await t.call('listOauthGrantsForCli', {}, stranger.token)).json()).toEqual([]);
    expect(
      (await t.call('revokeOauthGrantForCli', { grantId: grant.grantId }, stranger.token)).statusCode,
    ).toBe(404);
    const revoked = await s.session.call('revokeOauthGrantForCli', { grantId: grant.grantId });
    expect(revoked.statusCode).toBe(200);
    expect(await t.deps.credentials.verifyCaller(tokens.access_token)).toBeNull();
    expect(t.deps.credentials.verifyCached(tokens.access_token) ?? null).toBeNull();
    const refresh = await refreshGrant(s.client.client_id, tokens.refresh_token);
    expect(refresh.json().error).toBe('invalid_grant');
    expect((await s.session.call('listOauthGrantsForCli', {})).json()).toEqual([]);
  });
});

describe('browser clients and housekeeping', () => {
  it('lets a browser-based client call the token and registration endpoints from another origin', async () => {
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/oauth/token',
      headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST' },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(String(pre.headers['access-control-allow-headers'])).toContain('content-type');
    const res = await token({ grant_type: 'password' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const meta = await t.app.inject({ url: '/.well-known/oauth-authorization-server' });
    expect(meta.headers['access-control-allow-origin']).toBe('*');
  });

  // Last in the file: it moves the shared clock two days on.
  it('prunes old requests and spent refresh tokens, and keeps live ones', async () => {
    const s = await setup();
    const { code, verifier } = await approvedCode(s);
    const first = (await exchangeCode(s, code, verifier)).json();
    const second = (await refreshGrant(s.client.client_id, first.refresh_token)).json();
    (t.clock as ManualClock).advance(2 * 24 * 3600 * 1000);
    const pruned = await pruneOauth(t.deps);
    expect(pruned.requests).toBeGreaterThan(0);
    expect(pruned.refreshTokens).toBeGreaterThan(0);
    // The live refresh token still works (its access token has expired meanwhile).
    expect(await t.deps.credentials.verifyCaller(second.access_token)).toBeNull();
    const again = await refreshGrant(s.client.client_id, second.refresh_token);
    expect(again.statusCode).toBe(200);
  });
});
