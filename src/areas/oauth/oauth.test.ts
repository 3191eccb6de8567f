import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { AUDIENCE, BASE, oauthFlow, REDIRECT } from '../../../test/oauth-flow.ts';
import { seedOrg } from '../../../test/seed.ts';

// The authorization server through its HTTP endpoints on PGlite and PostgreSQL: metadata, registration,
// every refusal of /authorize, consent through the dashboard's functions. Tokens (code exchange, the token at
// work and refused outside /mcp, rotation, reuse, revocation) are oauth-tokens.test.ts; the whole flow with
// the SDK's client and Chromium is test/e2e/browser/oauth.test.ts.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});
const { pkce, form, register, authorize, setup } = oauthFlow(() => t);

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
