import { expect } from 'vitest';
import {
  type Fake,
  startGoogleDrive,
  startHubspot,
  startNotion,
  startSlack,
} from './fakes/integration-providers.ts';
import type { FakeProvider } from './fakes/oauth-provider.ts';
import { type TestApp, type TestAppOptions, testApp } from './harness.ts';
import { seedV1Tenant } from './seed.ts';
import { type V1Client, v1Client } from './v1-client.ts';

// Integration tests' common ground: the four provider fakes on 127.0.0.1, a Pier whose connectors point at
// them (INTEGRATIONS_<SLUG>_AUTH_URL/_TOKEN_URL/_API_URL, opened by OUTBOUND_ALLOW), and a helper that runs
// the OAuth flow end to end through Pier's public callback.

export type Providers = {
  hubspot: Awaited<ReturnType<typeof startHubspot>>;
  slack: Awaited<ReturnType<typeof startSlack>>;
  drive: Awaited<ReturnType<typeof startGoogleDrive>>;
  notion: Awaited<ReturnType<typeof startNotion>>;
};

export async function startProviders(): Promise<Providers & { close(): Promise<void> }> {
  const [hubspot, slack, drive, notion] = await Promise.all([
    startHubspot(),
    startSlack(),
    startGoogleDrive(),
    startNotion(),
  ]);
  return {
    hubspot,
    slack,
    drive,
    notion,
    close: async () => {
      await Promise.all([hubspot.close(), slack.close(), drive.close(), notion.close()]);
    },
  };
}

export function providerEnv(p: Providers): Record<string, string> {
  return {
    OUTBOUND_ALLOW: '127.0.0.1/32',
    INTEGRATIONS_HUBSPOT_CLIENT_ID: 'hs-client',
    INTEGRATIONS_HUBSPOT_CLIENT_SECRET: 'hs-secret',
    INTEGRATIONS_HUBSPOT_AUTH_URL: `${p.hubspot.url}/oauth/authorize`,
    INTEGRATIONS_HUBSPOT_TOKEN_URL: `${p.hubspot.url}/oauth/v1/token`,
    INTEGRATIONS_HUBSPOT_API_URL: p.hubspot.url,
    INTEGRATIONS_SLACK_CLIENT_ID: 'slack-client',
    INTEGRATIONS_SLACK_CLIENT_SECRET: 'slack-secret',
    INTEGRATIONS_SLACK_AUTH_URL: `${p.slack.url}/oauth/v2/authorize`,
    INTEGRATIONS_SLACK_TOKEN_URL: `${p.slack.url}/api/oauth.v2.access`,
    INTEGRATIONS_SLACK_API_URL: `${p.slack.url}/api`,
    INTEGRATIONS_GOOGLE_DRIVE_CLIENT_ID: 'g-client',
    INTEGRATIONS_GOOGLE_DRIVE_CLIENT_SECRET: 'g-secret',
    INTEGRATIONS_GOOGLE_DRIVE_AUTH_URL: `${p.drive.url}/o/oauth2/v2/auth`,
    INTEGRATIONS_GOOGLE_DRIVE_TOKEN_URL: `${p.drive.url}/token`,
    INTEGRATIONS_GOOGLE_DRIVE_API_URL: p.drive.url,
    INTEGRATIONS_NOTION_CLIENT_ID: 'notion-client',
    INTEGRATIONS_NOTION_CLIENT_SECRET: 'notion-secret',
    INTEGRATIONS_NOTION_AUTH_URL: `${p.notion.url}/v1/oauth/authorize`,
    INTEGRATIONS_NOTION_TOKEN_URL: `${p.notion.url}/v1/oauth/token`,
    INTEGRATIONS_NOTION_API_URL: `${p.notion.url}/v1`,
  };
}

export async function integrationsApp(p: Providers, opts: TestAppOptions = {}): Promise<TestApp> {
  return testApp({ ...opts, env: { ...providerEnv(p), ...opts.env } });
}

export async function tenant(
  t: TestApp,
): Promise<{ api: V1Client; tenant: Awaited<ReturnType<typeof seedV1Tenant>> }> {
  const tn = await seedV1Tenant(t.deps);
  return { api: v1Client(t, tn.live), tenant: tn };
}

/** Creates a connection and completes the OAuth flow through Pier's callback; returns its id. */
export async function connect(
  t: TestApp,
  api: V1Client,
  fake: FakeProvider,
  connectorSlug: string,
  endUserId = 'user-1',
): Promise<string> {
  const created = await api.post('/integrations/connections', {
    connectorSlug,
    endUserId,
    redirectUrl: 'https://app.example/done',
  });
  expect(created.statusCode, created.body).toBe(201);
  const { connectionId, authorizationUrl } = created.json();
  const { code, state } = fake.consent(authorizationUrl);
  const cb = await t.app.inject({
    method: 'GET',
    url: `/v1/integrations/oauth/callback?${new URLSearchParams({ code, state })}`,
  });
  expect(cb.statusCode, cb.body).toBe(302);
  const back = new URL(cb.headers.location as string);
  expect(back.searchParams.get('status'), back.toString()).toBe('success');
  expect(back.searchParams.get('connectionId')).toBe(connectionId);
  return connectionId;
}

export type { Fake };
