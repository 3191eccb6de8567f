import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { integrationsApp, type Providers, startProviders, tenant } from '../../../test/integrations-kit.ts';
import type { ManualClock } from '../../core/clock.ts';

// The hosted Connect page over HTTP: sessions made with an API key, the page listing only the allowed and
// configured connectors, OAuth picks sent to the provider's consent screen, key + subdomain providers
// connected at once and sent back to the app, fixable mistakes shown on the form, bad and expired sessions
// refused. The browser test (test/e2e/browser/connect-page.test.ts) drives it from the keyboard at 390 px.

let p: Providers & { close(): Promise<void> };
let t: TestApp;
beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p);
});
afterAll(async () => {
  await t?.close();
  await p?.close();
});

const form = (fields: Record<string, string>) => ({
  method: 'POST' as const,
  url: '/v1/integrations/connect',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString(),
});

describe('Connect page', () => {
  it('offers the allowed connectors, sends OAuth picks to the provider and key picks back to the app', async () => {
    const { api, tenant: tn } = await tenant(t);
    const made = await api.post('/integrations/connect-sessions', {
      endUserId: 'end-user-9',
      redirectUrl: 'https://app.example/connected?from=pier',
      allowedConnectors: ['hubspot', 'freshsales'],
      theme: { name: 'Acme <App>', primaryColor: '#aa3300' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const { url, token } = made.json();
    expect(url).toBe(`http://pier.test/v1/integrations/connect?session=${token}`);

    const pagePath = new URL(url).pathname + new URL(url).search;
    const page = await t.app.inject({ method: 'GET', url: pagePath });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('Acme &lt;App&gt;');
    expect(page.body).toContain('--primary:#aa3300');
    expect(page.body).toContain('>HubSpot</button>');
    expect(page.body).toContain('connector=freshsales');
    expect(page.body).not.toContain('Slack');

    const oauth = await t.app.inject(form({ session: token, connector: 'hubspot' }));
    expect(oauth.statusCode, oauth.body).toBe(303);
    const consent = new URL(oauth.headers.location as string);
    expect(consent.origin).toBe(p.hubspot.url);
    const { code, state } = p.hubspot.consent(consent.toString());
    const cb = await t.app.inject({
      method: 'GET',
      url: `/v1/integrations/oauth/callback?${new URLSearchParams({ code, state })}`,
    });
    const backHome = new URL(cb.headers.location as string);
    expect(backHome.origin + backHome.pathname).toBe('https://app.example/connected');
    expect(backHome.searchParams.get('status')).toBe('success');
    expect(backHome.searchParams.get('from')).toBe('pier');

    const formPage = await t.app.inject({ method: 'GET', url: `${pagePath}&connector=freshsales` });
    expect(formPage.body).toContain('name="var_domain"');
    expect(formPage.body).toContain('name="apiKey"');
    const missing = await t.app.inject(form({ session: token, connector: 'freshsales', var_domain: 'acme' }));
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('role="alert"');
    expect(missing.body).toContain('value="acme"');
    const badDomain = await t.app.inject(
      form({ session: token, connector: 'freshsales', var_domain: 'a b', apiKey: 'k' }),
    );
    expect(badDomain.statusCode).toBe(400);
    const ok = await t.app.inject(
      form({ session: token, connector: 'freshsales', var_domain: 'acme', apiKey: 'fs-key-1' }),
    );
    expect(ok.statusCode, ok.body).toBe(303);
    const done = new URL(ok.headers.location as string);
    expect(done.searchParams.get('status')).toBe('success');
    const id = done.searchParams.get('connectionId')!;

    const list = (await api.get('/integrations/connections')).json().data;
    expect(list.map((c: { id: string }) => c.id)).toContain(id);
    expect(list.find((c: { id: string }) => c.id === id)).toMatchObject({
      connectorSlug: 'freshsales',
      endUserId: 'end-user-9',
      status: 'connected',
    });
    expect(list.filter((c: { endUserId: string }) => c.endUserId === 'end-user-9')).toHaveLength(2);
    // Not offered by this session: refused even when posted by hand.
    const other = await t.app.inject(form({ session: token, connector: 'slack' }));
    expect(other.statusCode).toBe(404);
    expect(tn.org.id).toBeTruthy();
  });

  it('refuses altered and expired sessions, unknown or unconfigured connectors, and bad input', async () => {
    const { api } = await tenant(t);
    const made = (
      await api.post('/integrations/connect-sessions', {
        endUserId: 'u',
        redirectUrl: 'https://app.example/x',
      })
    ).json();
    const [payload, sig] = made.token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, u: 'someone-else' })).toString('base64url');
    for (const bad of [`${forged}.${sig}`, 'nonsense', '']) {
      const r = await t.app.inject({ method: 'GET', url: `/v1/integrations/connect?session=${bad}` });
      expect(r.statusCode, bad).toBe(403);
      expect(r.body).toContain('not valid');
    }
    const all = await t.app.inject({ method: 'GET', url: `/v1/integrations/connect?session=${made.token}` });
    expect(all.body).toContain('Slack');
    expect(all.body).not.toContain('>Dropbox<');
    (t.clock as ManualClock).advance(31 * 60_000);
    const late = await t.app.inject({ method: 'GET', url: `/v1/integrations/connect?session=${made.token}` });
    expect(late.statusCode).toBe(403);
    expect(late.body).toContain('expired');
    const lateForm = await t.app.inject(form({ session: made.token, connector: 'hubspot' }));
    expect(lateForm.statusCode).toBe(403);

    const unknown = await api.post('/integrations/connect-sessions', {
      endUserId: 'u',
      redirectUrl: 'https://a.example',
      allowedConnectors: ['nope'],
    });
    expect(unknown.json().error.code).toBe('CONNECTOR_NOT_FOUND');
    const unconfigured = await api.post('/integrations/connect-sessions', {
      endUserId: 'u',
      redirectUrl: 'https://a.example',
      allowedConnectors: ['dropbox'],
    });
    expect(unconfigured.statusCode).toBe(400);
    expect(unconfigured.json().error.code).toBe('CONNECTOR_NOT_CONFIGURED');
    for (const body of [
      { endUserId: 'u', redirectUrl: 'javascript:alert(1)' },
      { endUserId: 'u', redirectUrl: 'https://a.example', theme: { primaryColor: 'red;}</style>' } },
      {
        endUserId: 'u',
        redirectUrl: 'https://a.example',
        theme: { logoUrl: 'http://insecure.example/x.png' },
      },
    ]) {
      const r = await api.post('/integrations/connect-sessions', body);
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
    }
  });
});
