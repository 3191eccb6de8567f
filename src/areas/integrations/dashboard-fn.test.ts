import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';
import { expectError } from '../../../test/security.ts';
import { seedMember, seedUser } from '../../../test/seed.ts';

// The dashboard's and CLI's integrations functions: personal credentials, roles (members look and test,
// owners and admins connect), organization + environment scoping, and the OAuth flow coming back to the
// dashboard's page with the outcome.

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

describe('integrations functions', () => {
  it('lists connectors with their configuration and the variables each needs', async () => {
    const { tenant: tn } = await tenant(t);
    const res = await t.call('listIntegrationConnectorsForCli', {}, tn.owner.token);
    expect(res.statusCode, res.body).toBe(200);
    const bySlug = Object.fromEntries(res.json().data.map((c: { slug: string }) => [c.slug, c]));
    expect(Object.keys(bySlug).length).toBeGreaterThanOrEqual(60);
    expect(bySlug.hubspot).toMatchObject({ configured: true, category: 'crm' });
    expect(bySlug['google-drive'].env.required).toEqual([
      'INTEGRATIONS_GOOGLE_DRIVE_CLIENT_ID',
      'INTEGRATIONS_GOOGLE_DRIVE_CLIENT_SECRET',
    ]);
    expect(bySlug.dropbox).toMatchObject({ configured: false });
    expect(bySlug.dropbox.env.optional).toContain('INTEGRATIONS_DROPBOX_CONTENT_URL');
    // An API-key provider needs nothing from the operator: its end users bring their key.
    expect(bySlug.stripe).toMatchObject({ configured: true, authType: 'api_key', env: { required: [] } });
  });

  it('connects through the OAuth flow back to the dashboard, for owners only; members list and test', async () => {
    const { api, tenant: tn } = await tenant(t);
    const member = await seedMember(t.deps, tn.org.id, 'member');
    const base = { orgSlug: tn.org.slug };

    expectError(
      await t.call('connectIntegrationForDashboard', { ...base, connectorSlug: 'hubspot' }, member.token),
      403,
      'FORBIDDEN',
    );
    expectError(
      await t.call('connectIntegrationForDashboard', { ...base, connectorSlug: 'dropbox' }, tn.owner.token),
      400,
      'CONNECTOR_NOT_CONFIGURED',
    );
    expectError(
      await t.call('connectIntegrationForDashboard', { ...base, connectorSlug: 'nope' }, tn.owner.token),
      404,
      'CONNECTOR_NOT_FOUND',
    );

    const started = await t.call(
      'connectIntegrationForDashboard',
      { ...base, connectorSlug: 'hubspot' },
      tn.owner.token,
    );
    expect(started.statusCode, started.body).toBe(200);
    const { connectionId, authorizationUrl } = started.json();
    const { code, state } = p.hubspot.consent(authorizationUrl);
    const cb = await t.app.inject({
      method: 'GET',
      url: `/v1/integrations/oauth/callback?${new URLSearchParams({ code, state })}`,
    });
    expect(cb.statusCode).toBe(302);
    const back = new URL(cb.headers.location as string);
    expect(back.pathname).toBe('/integrations');
    expect(Object.fromEntries(back.searchParams)).toEqual({
      env: 'production',
      connectionId,
      status: 'success',
    });

    // The same organization's production connections, whoever made them (v1 key or dashboard).
    const viaKey = await connect(t, api, p.hubspot, 'hubspot', 'user-9');
    const list = await t.call('listIntegrationConnectionsForCli', base, member.token);
    expect(list.statusCode, list.body).toBe(200);
    expect(
      list
        .json()
        .data.map((c: { id: string }) => c.id)
        .sort(),
    ).toEqual([connectionId, viaKey].sort());
    const tested = await t.call('testIntegrationConnectionForCli', { ...base, connectionId }, member.token);
    expect(tested.json()).toEqual({ success: true });
    const after = await t.call('listIntegrationConnectionsForCli', base, member.token);
    expect(after.json().data.find((c: { id: string }) => c.id === connectionId)).toMatchObject({
      endUserId: 'dashboard-test',
      status: 'connected',
      lastUsedAt: expect.any(String),
    });
    p.hubspot.refuseRefresh(true);
    p.hubspot.expireAccessTokens();
    const failed = await t.call(
      'testIntegrationConnectionForCli',
      { ...base, connectionId: viaKey },
      member.token,
    );
    expect(failed.json()).toMatchObject({ success: false, error: expect.stringContaining('refresh') });
    p.hubspot.refuseRefresh(false);
    const filtered = await t.call(
      'listIntegrationConnectionsForCli',
      { ...base, status: 'expired' },
      member.token,
    );
    expect(filtered.json().data.map((c: { id: string }) => c.id)).toContain(viaKey);

    // Sandbox is another environment: nothing of production shows there.
    const sandbox = await t.call(
      'listIntegrationConnectionsForCli',
      { ...base, environment: 'sandbox' },
      member.token,
    );
    expect(sandbox.json().data).toEqual([]);
    expectError(
      await t.call(
        'testIntegrationConnectionForCli',
        { ...base, environment: 'sandbox', connectionId },
        member.token,
      ),
      404,
      'CONNECTION_NOT_FOUND',
    );
  });

  it("keeps other organizations out: a stranger's org is a 404, another org's connection too", async () => {
    const a = await tenant(t);
    const b = await tenant(t);
    const id = await connect(t, a.api, p.hubspot, 'hubspot');
    const stranger = await seedUser(t.deps);
    for (const name of [
      'listIntegrationConnectionsForCli',
      'testIntegrationConnectionForCli',
      'connectIntegrationForDashboard',
    ])
      expectError(
        await t.call(
          name,
          { orgSlug: a.tenant.org.slug, connectionId: id, connectorSlug: 'hubspot' },
          stranger.token,
        ),
        400,
        'VALIDATION_ERROR',
      );
    expectError(
      await t.call('listIntegrationConnectionsForCli', { orgSlug: a.tenant.org.slug }, stranger.token),
      404,
      'ORG_NOT_FOUND',
    );
    expectError(
      await t.call(
        'testIntegrationConnectionForCli',
        { orgSlug: a.tenant.org.slug, connectionId: id },
        stranger.token,
      ),
      404,
      'ORG_NOT_FOUND',
    );
    expectError(
      await t.call(
        'testIntegrationConnectionForCli',
        { orgSlug: b.tenant.org.slug, connectionId: id },
        b.tenant.owner.token,
      ),
      404,
      'CONNECTION_NOT_FOUND',
    );
    expect(
      (
        await t.call('listIntegrationConnectionsForCli', { orgSlug: b.tenant.org.slug }, b.tenant.owner.token)
      ).json().data,
    ).toEqual([]);
    // An API key is not a personal credential.
    expect((await t.call('listIntegrationConnectorsForCli', {}, a.tenant.live)).statusCode).toBe(403);
  });
});
