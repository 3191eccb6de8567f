import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipedrive, startSalesforce } from '../../../test/fakes/integration-providers-more.ts';
import type { TestApp } from '../../../test/harness.ts';
import { testApp } from '../../../test/harness.ts';
import { connect, tenant } from '../../../test/integrations-kit.ts';
import { parseOutboundAllow } from '../../core/net/outbound-allow.ts';
import { connectionApiBase } from './connection-sessions.ts';

// Per-connection API bases: Salesforce's `instance_url` and Pipedrive's `api_domain` from the token answer
// are where that connection's calls go (no INTEGRATIONS_<SLUG>_API_URL set), and a refresh keeps them. The
// fakes serve their API on a second server only; their login host answers API paths with 404.

let sf: Awaited<ReturnType<typeof startSalesforce>>;
let pd: Awaited<ReturnType<typeof startPipedrive>>;
let t: TestApp;

beforeAll(async () => {
  [sf, pd] = await Promise.all([
    startSalesforce({ instanceHost: true }),
    startPipedrive({ companyHost: true }),
  ]);
  t = await testApp({
    env: {
      OUTBOUND_ALLOW: '127.0.0.1/32',
      INTEGRATIONS_SALESFORCE_CLIENT_ID: 'sf-client',
      INTEGRATIONS_SALESFORCE_CLIENT_SECRET: 'sf-secret',
      INTEGRATIONS_SALESFORCE_AUTH_URL: `${sf.url}/services/oauth2/authorize`,
      INTEGRATIONS_SALESFORCE_TOKEN_URL: `${sf.url}/services/oauth2/token`,
      INTEGRATIONS_PIPEDRIVE_CLIENT_ID: 'pd-client',
      INTEGRATIONS_PIPEDRIVE_CLIENT_SECRET: 'pd-secret',
      INTEGRATIONS_PIPEDRIVE_AUTH_URL: `${pd.url}/oauth/authorize`,
      INTEGRATIONS_PIPEDRIVE_TOKEN_URL: `${pd.url}/oauth/token`,
    },
  });
  sf.store.Contact.push({ Id: '003ACME00000000001', FirstName: 'Ada', LastName: 'Lovelace' });
  pd.store.persons.push({ id: 1, first_name: 'Grace', last_name: 'Hopper', name: 'Grace Hopper' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([sf?.close(), pd?.close()]);
});

const hostOf = (url: string) => new URL(url).host;

describe('per-connection API base', () => {
  it("sends a Salesforce connection's calls to its instance_url, before and after a refresh", async () => {
    expect(sf.apiUrl).not.toBe(sf.url);
    const { api } = await tenant(t);
    const id = await connect(t, api, sf, 'salesforce');
    expect((await api.get(`/integrations/connections/${id}`)).json().externalAccountId).toBe('00DACME');
    const res = await api.get('/integrations/crm/contacts', { connectionId: id });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.map((c: { lastName: string }) => c.lastName)).toEqual(['Lovelace']);
    expect(new Set(sf.calls.map((c) => c.host))).toEqual(new Set([hostOf(sf.apiUrl)]));

    sf.expireAccessTokens();
    const after = await api.get('/integrations/crm/contacts', { connectionId: id });
    expect(after.statusCode, after.body).toBe(200);
    expect(sf.tokenGrants.at(-1)!.grant).toBe('refresh_token');
    expect(sf.calls.at(-1)!.host).toBe(hostOf(sf.apiUrl));
    // Passthrough uses the same base.
    const pt = await api.post('/integrations/passthrough', {
      connectionId: id,
      method: 'GET',
      path: '/services/oauth2/userinfo',
    });
    expect(pt.statusCode, pt.body).toBe(200);
    expect(sf.calls.at(-1)!).toMatchObject({ host: hostOf(sf.apiUrl), path: '/services/oauth2/userinfo' });
  });

  it("keeps a Pipedrive connection's api_domain when the refresh answer leaves it out", async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, pd, 'pipedrive');
    expect((await api.get(`/integrations/connections/${id}`)).json().externalAccountName).toBe('Acme Ltd');
    pd.expireAccessTokens();
    const res = await api.get('/integrations/crm/contacts', { connectionId: id });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data[0]).toMatchObject({ firstName: 'Grace', lastName: 'Hopper' });
    expect(pd.tokenGrants.at(-1)!.grant).toBe('refresh_token');
    expect(pd.calls.at(-1)).toMatchObject({ host: hostOf(pd.apiUrl), path: '/api/v1/persons' });
    expect(pd.calls.every((c) => c.host === hostOf(pd.apiUrl))).toBe(true);
  });

  it('takes an http base only to a destination OUTBOUND_ALLOW opens', () => {
    const { allow } = parseOutboundAllow('127.0.0.1/32,gw.corp.example');
    expect(connectionApiBase('https://acme.my.salesforce.com/', allow)).toBe(
      'https://acme.my.salesforce.com',
    );
    expect(connectionApiBase('http://127.0.0.1:9999', allow)).toBe('http://127.0.0.1:9999');
    expect(connectionApiBase('http://gw.corp.example/sf', allow)).toBe('http://gw.corp.example/sf');
    expect(connectionApiBase('http://acme.my.salesforce.com', allow)).toBeNull();
    expect(connectionApiBase('http://10.0.0.1', allow)).toBeNull();
    expect(connectionApiBase('https://user:pw@acme.example', allow)).toBeNull();
    expect(connectionApiBase('javascript:alert(1)', allow)).toBeNull();
    expect(connectionApiBase('not a url', allow)).toBeNull();
  });
});
