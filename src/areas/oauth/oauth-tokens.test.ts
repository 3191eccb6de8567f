import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { AUDIENCE, BASE, oauthFlow, REDIRECT } from '../../../test/oauth-flow.ts';
import { seedUser } from '../../../test/seed.ts';
import { acceptAudience } from '../../core/auth/resolve.ts';
import type { ManualClock } from '../../core/clock.ts';
import { pruneOauth } from './prune.ts';

// The authorization server's tokens through its HTTP endpoints on PGlite and PostgreSQL: code exchange, the
// token at work (and refused outside /mcp), rotation, reuse, client authentication, revocation of grants,
// cross-origin browser clients and pruning. Metadata, registration and /authorize are oauth.test.ts.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});
const { pkce, token, register, setup, exchangeCode, refreshGrant, approvedCode } = oauthFlow(() => t);

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
    // The verification above marks the token used, written off the request path: read until it shows.
    let list = await s.session.call('listOauthGrantsForCli', {});
    for (let i = 0; i < 100 && list.json()[0]?.lastUsedAt == null; i++) {
      await new Promise((r) => setTimeout(r, 50));
      list = await s.session.call('listOauthGrantsForCli', {});
    }
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
