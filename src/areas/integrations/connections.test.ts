import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { v1Client } from '../../../test/v1-client.ts';
import { expectV1Security } from '../../../test/v1-security.ts';
import type { ManualClock } from '../../core/clock.ts';
import { refreshDue } from './jobs.ts';
import { integrationConnections } from './tables.ts';

let p: Providers & { close(): Promise<void> };
let t: TestApp;
const logs: string[] = [];

beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p, {
    logStream: new Writable({
      write(chunk, _enc, cb) {
        logs.push(String(chunk));
        cb();
      },
    }),
  });
});
afterAll(async () => {
  await t?.close();
  await p?.close();
});

describe('connectors', () => {
  it('lists the connectors, filters by category and says which are configured', async () => {
    const { api } = await tenant(t);
    const all = await api.get('/integrations/connectors');
    expect(all.statusCode).toBe(200);
    const slugs = all.json().data.map((c: { slug: string }) => c.slug);
    expect(slugs).toEqual(expect.arrayContaining(['hubspot', 'google-drive', 'slack', 'notion']));
    const crm = await api.get('/integrations/connectors', { category: 'crm' });
    const crmList = crm.json().data as { slug: string; categories: string[] }[];
    expect(crmList.every((c) => c.categories.includes('crm'))).toBe(true);
    expect(crmList.map((c) => c.slug)).toEqual(
      expect.arrayContaining(['hubspot', 'zoho-crm', 'attio', 'close']),
    );
    expect(crmList.map((c) => c.slug)).not.toContain('slack');
    const one = await api.get('/integrations/connectors/hubspot');
    expect(one.json()).toMatchObject({
      slug: 'hubspot',
      name: 'HubSpot',
      category: 'crm',
      authType: 'oauth2',
      configured: true,
      features: expect.arrayContaining(['contacts']),
      supports: { unified: ['crm'], passthrough: true },
    });
    expect((await api.get('/integrations/connectors/nope')).json().error.code).toBe('CONNECTOR_NOT_FOUND');
    expect((await api.get('/integrations/connectors', { category: 'games' })).statusCode).toBe(400);
  });
});

describe('connections', () => {
  it('refuses bad input with clear 4xx codes', async () => {
    const { api } = await tenant(t);
    const bad = [
      [{ endUserId: 'u' }, 400, 'VALIDATION_ERROR'],
      [{ connectorSlug: 'hubspot' }, 400, 'VALIDATION_ERROR'],
      [
        { connectorSlug: 'hubspot', endUserId: 'u', redirectUrl: 'javascript:alert(1)' },
        400,
        'VALIDATION_ERROR',
      ],
      [{ connectorSlug: 'nope', endUserId: 'u' }, 404, 'CONNECTOR_NOT_FOUND'],
    ] as const;
    for (const [body, status, code] of bad) {
      const res = await api.post('/integrations/connections', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json().error.code).toBe(code);
    }
  });

  it('answers CONNECTOR_NOT_CONFIGURED for a connector without an OAuth client', async () => {
    const bare = await integrationsApp(p, { env: { INTEGRATIONS_HUBSPOT_CLIENT_ID: '' } });
    try {
      const tn = await seedV1Tenant(bare.deps);
      const res = await v1Client(bare, tn.live).post('/integrations/connections', {
        connectorSlug: 'hubspot',
        endUserId: 'u',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('CONNECTOR_NOT_CONFIGURED');
      expect(res.json().error.message).toContain('INTEGRATIONS_HUBSPOT_CLIENT_ID');
      const c = await v1Client(bare, tn.live).get('/integrations/connectors/hubspot');
      expect(c.json().configured).toBe(false);
    } finally {
      await bare.close();
    }
  });

  it('runs the OAuth flow: state, PKCE, callback, encrypted tokens, account filled in', async () => {
    const { api } = await tenant(t);
    const created = await api.post('/integrations/connections', {
      connectorSlug: 'google-drive',
      endUserId: 'end-user-7',
      redirectUrl: 'https://app.example/back?x=1',
    });
    expect(created.statusCode).toBe(201);
    const { connectionId, authorizationUrl } = created.json();
    const auth = new URL(authorizationUrl);
    expect(auth.origin + auth.pathname).toBe(`${p.drive.url}/o/oauth2/v2/auth`);
    expect(auth.searchParams.get('redirect_uri')).toBe('http://pier.test/v1/integrations/oauth/callback');
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('access_type')).toBe('offline');
    expect(auth.searchParams.get('scope')).toBe('https://www.googleapis.com/auth/drive');
    const before = await api.get(`/integrations/connections/${connectionId}`);
    expect(before.json()).toMatchObject({
      status: 'expired',
      endUserId: 'end-user-7',
      externalAccountId: null,
    });

    const { code, state } = p.drive.consent(authorizationUrl);
    const cb = await t.app.inject({
      method: 'GET',
      url: `/v1/integrations/oauth/callback?code=${code}&state=${state}`,
    });
    expect(cb.statusCode).toBe(302);
    const back = new URL(cb.headers.location as string);
    expect(back.origin + back.pathname).toBe('https://app.example/back');
    expect(Object.fromEntries(back.searchParams)).toEqual({ x: '1', connectionId, status: 'success' });
    // The verifier reached the token endpoint (the fake checks it against the challenge).
    expect(p.drive.tokenGrants.at(-1)!.body.code_verifier).toMatch(/^[\w-]{43}$/);

    const got = await api.get(`/integrations/connections/${connectionId}`);
    expect(got.json()).toMatchObject({
      id: connectionId,
      connectorSlug: 'google-drive',
      status: 'connected',
      externalAccountId: '0123perm',
      externalAccountName: 'ada@acme.test',
    });
    expect(got.body).not.toMatch(/at_|rt_/);
    const [row] = await t.deps.db.orm.select().from(integrationConnections);
    const all = await t.deps.db.orm.select().from(integrationConnections);
    for (const r of [row, ...all]) expect(JSON.stringify(r)).not.toMatch(/"at_|"rt_|at_[0-9a-f]{24}/);

    // A replayed callback (same state) is refused.
    const replay = await t.app.inject({
      method: 'GET',
      url: `/v1/integrations/oauth/callback?code=${code}&state=${state}`,
    });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().error.code).toBe('OAUTH_STATE_INVALID');
    // So is a state Pier never issued, and none at all.
    for (const q of ['code=x&state=forged', 'code=x']) {
      const r = await t.app.inject({ method: 'GET', url: `/v1/integrations/oauth/callback?${q}` });
      expect(r.statusCode).toBe(400);
      expect(r.json().error.code).toBe('OAUTH_STATE_INVALID');
    }
  });

  it('refuses an expired state and reports a denied consent to the redirect URL', async () => {
    const { api } = await tenant(t);
    const a = (
      await api.post('/integrations/connections', { connectorSlug: 'hubspot', endUserId: 'u' })
    ).json();
    const { code, state } = p.hubspot.consent(a.authorizationUrl);
    (t.clock as ManualClock).advance(11 * 60_000);
    const late = await t.app.inject({
      method: 'GET',
      url: `/v1/integrations/oauth/callback?code=${code}&state=${state}`,
    });
    expect(late.json().error.code).toBe('OAUTH_STATE_INVALID');

    const b = (
      await api.post('/integrations/connections', {
        connectorSlug: 'hubspot',
        endUserId: 'u',
        redirectUrl: 'https://app.example/cb',
      })
    ).json();
    const s2 = new URL(b.authorizationUrl).searchParams.get('state')!;
    const denied = await t.app.inject({
      method: 'GET',
      url: `/v1/integrations/oauth/callback?error=access_denied&error_description=User+said+no&state=${s2}`,
    });
    expect(denied.statusCode).toBe(302);
    const back = new URL(denied.headers.location as string);
    expect(back.searchParams.get('status')).toBe('error');
    expect(back.searchParams.get('error')).toContain('access_denied');
    const conn = (await api.get(`/integrations/connections/${b.connectionId}`)).json();
    expect(conn.status).toBe('error');
    expect(conn.statusReason).toContain('User said no');
  });

  it('lists with filters, tests, and keeps other organizations out (404)', async () => {
    const { api, tenant: owner } = await tenant(t);
    const hs = await connect(t, api, p.hubspot, 'hubspot');
    const sl = await connect(t, api, p.slack, 'slack');
    const list = await api.get('/integrations/connections');
    expect(
      list
        .json()
        .data.map((c: { id: string }) => c.id)
        .sort(),
    ).toEqual([hs, sl].sort());
    const onlySlack = await api.get('/integrations/connections', { connectorId: 'slack' });
    expect(onlySlack.json().data).toHaveLength(1);
    expect(onlySlack.json().data[0]).toMatchObject({
      id: sl,
      externalAccountId: 'T0001',
      externalAccountName: 'Acme Workspace',
    });
    expect((await api.get('/integrations/connections', { status: 'expired' })).json().data).toEqual([]);
    expect((await api.get('/integrations/connections', { status: 'weird' })).statusCode).toBe(400);

    const tested = await api.post(`/integrations/connections/${hs}/test`);
    expect(tested.json()).toEqual({ success: true });
    expect((await api.get(`/integrations/connections/${hs}`)).json().lastUsedAt).not.toBeNull();

    for (const [method, url] of [
      ['GET', `/integrations/connections/${hs}`],
      ['DELETE', `/integrations/connections/${hs}`],
      ['POST', `/integrations/connections/${hs}/test`],
      ['GET', `/integrations/crm/contacts?connectionId=${hs}`],
      ['POST', `/integrations/crm/contacts?connectionId=${hs}`],
    ] as const) {
      await expectV1Security(t, {
        method,
        url,
        body: method === 'POST' ? {} : undefined,
        owner,
        notFoundCode: 'CONNECTION_NOT_FOUND',
      });
    }
    // The other organization's list does not show them either.
    const other = await seedV1Tenant(t.deps);
    expect((await v1Client(t, other.live).get('/integrations/connections')).json().data).toEqual([]);
    expect((await api.get('/integrations/connections/not-a-uuid')).json().error.code).toBe(
      'CONNECTION_NOT_FOUND',
    );
  });

  it('refreshes tokens before they expire (schedule) and on a provider 401, one refresh each', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.hubspot, 'hubspot');
    const grants = () => p.hubspot.tokenGrants.filter((g) => g.grant === 'refresh_token').length;
    const before = grants();
    // On a 401 from the provider: one refresh, then the call succeeds with the new token.
    p.hubspot.expireAccessTokens();
    const listed = await api.get('/integrations/crm/contacts', { connectionId: id });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(grants()).toBe(before + 1);
    // Close to expiry (HubSpot tokens live 30 min): the schedule refreshes it.
    (t.clock as ManualClock).advance(27 * 60_000);
    const out = await refreshDue(t.deps);
    expect(out.failed).toBe(0);
    expect(grants()).toBeGreaterThanOrEqual(before + 2);
    expect((await api.get('/integrations/crm/contacts', { connectionId: id })).statusCode).toBe(200);
  });

  it('runs one refresh for many concurrent calls that meet a 401', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.hubspot, 'hubspot');
    const grants = () => p.hubspot.tokenGrants.filter((g) => g.grant === 'refresh_token').length;
    const before = grants();
    p.hubspot.expireAccessTokens();
    const all = await Promise.all(
      Array.from({ length: 8 }, () => api.get('/integrations/crm/companies', { connectionId: id })),
    );
    expect(all.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(grants()).toBe(before + 1);
  });

  it('turns the connection expired when the provider refuses the refresh, with a clear 409 after', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.slack, 'slack');
    p.slack.refuseRefresh(true);
    try {
      p.slack.expireAccessTokens();
      const res = await api.get('/integrations/communication/channels', { connectionId: id });
      expect(res.statusCode).toBe(409);
      expect(res.json().error.code).toBe('CONNECTION_NOT_CONNECTED');
      const conn = (await api.get(`/integrations/connections/${id}`)).json();
      expect(conn.status).toBe('expired');
      expect(conn.statusReason).toContain('invalid_refresh_token');
      const again = await api.get('/integrations/communication/channels', { connectionId: id });
      expect(again.json().error.code).toBe('CONNECTION_NOT_CONNECTED');
      expect((await api.post(`/integrations/connections/${id}/test`)).json()).toMatchObject({
        success: false,
        error: expect.stringContaining('expired'),
      });
    } finally {
      p.slack.refuseRefresh(false);
    }
  });

  it('deletes a connection, revoking the grant at the provider', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.drive, 'google-drive');
    const del = await api.del(`/integrations/connections/${id}`);
    expect(del.json()).toEqual({ success: true });
    expect(p.drive.revoked.at(-1)).toMatch(/^rt_/);
    expect((await api.get(`/integrations/connections/${id}`)).statusCode).toBe(404);
    const sl = await connect(t, api, p.slack, 'slack');
    await api.del(`/integrations/connections/${sl}`);
    expect(p.slack.calls.at(-1)!.path).toBe('/api/auth.revoke');
  });

  it('never writes a token to the logs', () => {
    const text = logs.join('');
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toMatch(/at_[0-9a-f]{24}|rt_[0-9a-f]{24}|code_[0-9a-f]{16}/);
    expect(text).not.toContain('hs-secret');
  });
});
