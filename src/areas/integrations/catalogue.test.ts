import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CatalogueFake,
  type Expect,
  startCatalogueFake,
} from '../../../test/fakes/catalogue-provider.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { type V1Client, v1Client } from '../../../test/v1-client.ts';
import { parseCatalogue, RAW_CATALOGUE } from './catalogue/index.ts';
import { connectors } from './connectors/index.ts';

// Every catalogue entry, end to end against one configurable fake provider that holds each to its quirks
// (test/fakes/catalogue-provider.ts): OAuth (authorization URL, code exchange, a refresh after the token
// stops working, revocation) or the API key / Basic credentials, then a passthrough call, each with the
// credential where the entry says and the connection's variables in the URL. The providers' URLs point at
// the fake through the operator's overrides (INTEGRATIONS_<SLUG>_AUTH_URL/_TOKEN_URL/_API_URL), placeholders
// included, as the area's other tests do.

let fake: CatalogueFake;
let t: TestApp;
let api: V1Client;
const plan = new Map<string, Expect>();

const prefix = (slug: string) => `INTEGRATIONS_${slug.toUpperCase().replace(/-/g, '_')}`;

beforeAll(async () => {
  fake = await startCatalogueFake();
  const env: Record<string, string> = { OUTBOUND_ALLOW: '127.0.0.1/32' };
  for (const c of connectors) {
    const e = c.entry;
    const vars = Object.fromEntries(
      Object.entries(e.variables).map(([k, v]) => [k, v.example ?? v.default ?? 'acme']),
    );
    const x: Expect = {
      entry: e,
      clientId: `${e.slug}-client`,
      // Characters that HTTP Basic client authentication must form-encode (RFC 6749 2.3.1).
      clientSecret: `s3cret:${e.slug}/+`,
      vars,
      secret:
        e.auth.kind === 'api_key'
          ? `key-${e.slug}-0123456789`
          : e.auth.kind === 'basic'
            ? `user-${e.slug}:${e.auth.passwordLabel === null ? (e.auth.fixedPassword ?? '') : `pw-${e.slug}`}`
            : undefined,
    };
    plan.set(e.slug, x);
    fake.expect(x);
    const p = prefix(e.slug);
    const varPath = Object.keys(e.variables)
      .map((n) => `/{${n}}`)
      .join('');
    env[`${p}_API_URL`] = `${fake.url}/${e.slug}/api${varPath}`;
    if (e.contentUrl) env[`${p}_CONTENT_URL`] = `${fake.url}/${e.slug}/content${varPath}`;
    if (e.auth.kind === 'oauth2') {
      env[`${p}_CLIENT_ID`] = x.clientId;
      env[`${p}_CLIENT_SECRET`] = x.clientSecret;
      env[`${p}_AUTH_URL`] = `${fake.url}/${e.slug}/authorize${varPath}`;
      env[`${p}_TOKEN_URL`] = `${fake.url}/${e.slug}/token${varPath}`;
    }
  }
  t = await testApp({ env });
  api = v1Client(t, (await seedV1Tenant(t.deps)).live);
}, 120_000);
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe('the catalogue', () => {
  it('validates every entry and lists at least 60 providers with what each supports', async () => {
    expect(parseCatalogue(RAW_CATALOGUE).length).toBe(connectors.length);
    const res = await api.get('/integrations/connectors');
    expect(res.statusCode).toBe(200);
    const data = res.json().data as { slug: string; supports: { unified: string[] }; authType: string }[];
    expect(data.length).toBeGreaterThanOrEqual(60);
    expect(new Set(data.map((c) => c.authType))).toEqual(new Set(['oauth2', 'api_key', 'basic']));
    expect(data.find((c) => c.slug === 'slack')!.supports.unified).toEqual(['communication']);
    const zendesk = (await api.get('/integrations/connectors/zendesk')).json();
    expect(zendesk).toMatchObject({
      categories: ['ticketing'],
      variables: [{ name: 'subdomain', required: true, example: 'acme' }],
      credentials: [],
      supports: { unified: [], passthrough: true },
    });
    const byCategory = await api.get('/integrations/connectors', { category: 'accounting' });
    expect(byCategory.json().data.map((c: { slug: string }) => c.slug)).toEqual(
      expect.arrayContaining(['quickbooks', 'xero', 'stripe']),
    );
  });

  it('refuses a bad entry at load, naming the provider and the field', () => {
    const good = RAW_CATALOGUE.find((e) => (e as { slug: string }).slug === 'zendesk') as Record<
      string,
      unknown
    >;
    const bad = [
      { ...good, slug: 'no-https', baseUrl: 'http://{subdomain}.zendesk.com' },
      { ...good, slug: 'undeclared', variables: {} },
      { ...good, slug: 'extra-field', colour: 'green' },
    ];
    expect(() => parseCatalogue([good, good])).toThrow(/zendesk: listed twice/);
    const thrown = (() => {
      try {
        parseCatalogue(bad);
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    })();
    expect(thrown).toMatch(/no-https: baseUrl: must be an https URL/);
    expect(thrown).toMatch(/undeclared: .*\{subdomain\} is used in a URL but not declared/);
    expect(thrown).toMatch(/extra-field: .*colour/);
  });
});

describe('every provider connects and answers a passthrough call with its quirks honoured', () => {
  for (const c of connectors) {
    it(`${c.slug} (${c.authType})`, async () => {
      const x = plan.get(c.slug)!;
      const e = x.entry;
      // A tenant per provider: each stays within its API key's rate limit.
      const api = v1Client(t, (await seedV1Tenant(t.deps)).live);
      let connectionId: string;
      if (e.auth.kind === 'oauth2') {
        const created = await api.post('/integrations/connections', {
          connectorSlug: e.slug,
          endUserId: 'u-1',
          redirectUrl: 'https://app.example/done',
          connectionConfig: x.vars,
        });
        expect(created.statusCode, created.body).toBe(201);
        expect(created.json().status).toBe('expired');
        const { code, state } = fake.consent(e.slug, created.json().authorizationUrl);
        const cb = await t.app.inject({
          method: 'GET',
          url: `/v1/integrations/oauth/callback?${new URLSearchParams({ code, state })}`,
        });
        expect(cb.statusCode, cb.body).toBe(302);
        expect(new URL(cb.headers.location as string).searchParams.get('status'), cb.headers.location).toBe(
          'success',
        );
        connectionId = created.json().connectionId;
        expect(fake.grants(e.slug).map((g) => g.grant)).toEqual(['authorization_code']);
      } else {
        const [username, password] = x.secret!.split(/:(.*)/s) as [string, string];
        const credentials =
          e.auth.kind === 'api_key'
            ? { apiKey: x.secret }
            : e.auth.passwordLabel === null
              ? { username }
              : { username, password };
        const created = await api.post('/integrations/connections', {
          connectorSlug: e.slug,
          endUserId: 'u-1',
          connectionConfig: x.vars,
          credentials,
        });
        expect(created.statusCode, created.body).toBe(201);
        expect(created.json()).toMatchObject({ status: 'connected', authorizationUrl: null });
        connectionId = created.json().connectionId;
      }
      const got = (await api.get(`/integrations/connections/${connectionId}`)).json();
      expect(got.status, got.statusReason).toBe('connected');
      if (e.account) expect(got.externalAccountId).toBe(`acct-${e.slug}`);

      const pass = () =>
        api.post('/integrations/passthrough', {
          connectionId,
          method: 'GET',
          path: '/ping',
          query: { q: '1' },
        });
      const first = await pass();
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().echo).toEqual({ method: 'GET', path: '/ping' });

      if (e.auth.kind === 'oauth2') {
        // The token stops working: the 401 refreshes it (the token endpoint's quirks again) and the call succeeds.
        fake.expireAccessTokens(e.slug);
        const again = await pass();
        expect(again.statusCode, again.body).toBe(200);
        expect(fake.grants(e.slug).map((g) => g.grant)).toEqual(['authorization_code', 'refresh_token']);
      }
      const del = await api.del(`/integrations/connections/${connectionId}`);
      expect(del.statusCode).toBe(200);
      if (e.auth.kind === 'oauth2' && e.auth.revokeUrl) expect(fake.revoked(e.slug)).toHaveLength(1);
      expect(fake.refusals(e.slug)).toEqual([]);
    }, 60_000);
  }
});

describe('key-based and templated connections refuse bad input with 4xx codes', () => {
  it('asks for credentials, checks them and the variables, and keeps other tenants out', async () => {
    const api = v1Client(t, (await seedV1Tenant(t.deps)).live);
    const none = await api.post('/integrations/connections', { connectorSlug: 'stripe', endUserId: 'u' });
    expect(none.statusCode).toBe(400);
    expect(none.json().error.code).toBe('CREDENTIALS_REQUIRED');
    const wrong = await api.post('/integrations/connections', {
      connectorSlug: 'stripe',
      endUserId: 'u',
      credentials: { apiKey: 'sk_wrong_key' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.code).toBe('CREDENTIALS_INVALID');
    expect(wrong.body).not.toContain('sk_wrong_key');
    expect((await api.get('/integrations/connections')).json().data).toEqual([]);

    for (const connectionConfig of [
      {},
      { subdomain: 'evil.example/x' },
      { subdomain: 'acme', region: 'eu' },
    ]) {
      const res = await api.post('/integrations/connections', {
        connectorSlug: 'zendesk',
        endUserId: 'u',
        connectionConfig,
      });
      expect(res.statusCode, JSON.stringify(connectionConfig)).toBe(400);
      expect(res.json().error.code).toBe('CONNECTION_CONFIG_INVALID');
    }

    const ok = await api.post('/integrations/connections', {
      connectorSlug: 'stripe',
      endUserId: 'u',
      credentials: { apiKey: plan.get('stripe')!.secret },
    });
    expect(ok.statusCode).toBe(201);
    const other = v1Client(t, (await seedV1Tenant(t.deps)).live);
    const id = ok.json().connectionId;
    expect((await other.get(`/integrations/connections/${id}`)).statusCode).toBe(404);
    const res = await other.post('/integrations/passthrough', {
      connectionId: id,
      method: 'GET',
      path: '/x',
    });
    expect(res.statusCode).toBe(404);
  });
});
