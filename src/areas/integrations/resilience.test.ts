import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueFake, startCatalogueFake } from '../../../test/fakes/catalogue-provider.ts';
import { type FakeServer, startFake } from '../../../test/fakes/fake-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { type V1Client, v1Client } from '../../../test/v1-client.ts';
import type { ManualClock } from '../../core/clock.ts';
import { webhookDeliveries } from '../../core/webhook-tables.ts';
import { attemptWebhook, signWebhook } from '../../core/webhooks.ts';
import { MAX_REFRESH_FAILURES } from './connection-tokens.ts';
import { connectorBySlug } from './connectors/index.ts';
import { refreshDue } from './jobs.ts';
import { integrationConnections } from './tables.ts';

// Calls that survive a provider's bad moments. Idempotent calls retried on a 5xx with back-off (POST
// never). Token refresh that fits the token: refreshed once 75 % of its lifetime has passed or 5 minutes before it
// ends, whichever is later (a 60-second token is not refreshed before every call), and a provider outage
// at the token endpoint retried with back-off before the connection is marked broken, then recovered.
// Against the catalogue's fake provider, with Attio's entry (plain OAuth 2) and 60-second tokens.

let fake: CatalogueFake;
let t: TestApp;
const SLUG = 'attio';

beforeAll(async () => {
  fake = await startCatalogueFake();
  fake.expect({
    entry: connectorBySlug(SLUG)!.entry,
    clientId: 'c',
    clientSecret: 's',
    vars: {},
    expiresInSec: 60,
  });
  t = await testApp({
    env: {
      OUTBOUND_ALLOW: '127.0.0.1/32',
      INTEGRATIONS_ATTIO_CLIENT_ID: 'c',
      INTEGRATIONS_ATTIO_CLIENT_SECRET: 's',
      INTEGRATIONS_ATTIO_AUTH_URL: `${fake.url}/${SLUG}/authorize`,
      INTEGRATIONS_ATTIO_TOKEN_URL: `${fake.url}/${SLUG}/token`,
      INTEGRATIONS_ATTIO_API_URL: `${fake.url}/${SLUG}/api`,
    },
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const clock = () => t.clock as ManualClock;
const refreshes = () => fake.grants(SLUG).filter((g) => g.grant === 'refresh_token').length;

async function connect(given?: V1Client): Promise<{ api: V1Client; id: string }> {
  const api = given ?? v1Client(t, (await seedV1Tenant(t.deps)).live);
  const created = await api.post('/integrations/connections', { connectorSlug: SLUG, endUserId: 'u' });
  const { code, state } = fake.consent(SLUG, created.json().authorizationUrl);
  const cb = await t.app.inject({
    method: 'GET',
    url: `/v1/integrations/oauth/callback?${new URLSearchParams({ code, state })}`,
  });
  expect(cb.statusCode).toBe(200);
  return { api, id: created.json().connectionId };
}

const call = (api: V1Client, connectionId: string) =>
  api.post('/integrations/passthrough', { connectionId, method: 'GET', path: '/objects' });

const row = async (id: string) =>
  (await t.deps.db.orm.select().from(integrationConnections).where(eq(integrationConnections.id, id)))[0]!;

describe('token refresh', () => {
  it('does not refresh a 60 s token before every call: once, after 45 s', async () => {
    const { api, id } = await connect();
    const before = refreshes();
    for (let i = 0; i < 10; i++) expect((await call(api, id)).statusCode).toBe(200);
    clock().advance(40_000);
    for (let i = 0; i < 5; i++) expect((await call(api, id)).statusCode).toBe(200);
    expect(refreshes()).toBe(before);
    // The schedule leaves it alone too until it is due.
    expect((await refreshDue(t.deps)).refreshed).toBe(0);

    clock().advance(6_000);
    for (let i = 0; i < 5; i++) expect((await call(api, id)).statusCode).toBe(200);
    expect(refreshes()).toBe(before + 1);
    // The new token is good for another 45 s.
    clock().advance(30_000);
    expect((await call(api, id)).statusCode).toBe(200);
    expect(refreshes()).toBe(before + 1);
    clock().advance(16_000);
    expect((await refreshDue(t.deps)).refreshed).toBeGreaterThanOrEqual(1);
    expect(refreshes()).toBe(before + 2);
  }, 60_000);

  it('retries a failing token endpoint with back-off, marks the connection broken, and recovers it', async () => {
    // Only this test's connection on the schedule's list.
    await t.deps.db.orm.delete(integrationConnections);
    const { api, id } = await connect();
    clock().advance(46_000);
    // Every refresh grant answers 503 for a while; each round tries twice (once more at once).
    fake.failRefreshes(SLUG, 2 * MAX_REFRESH_FAILURES);
    const grantsBefore = refreshes();
    // Due, the token still valid: the refresh fails, the call still goes through with the current token.
    expect((await call(api, id)).statusCode).toBe(200);
    let r = await row(id);
    expect(r).toMatchObject({ status: 'connected', refreshFailures: 1 });
    // Backing off: neither calls nor the schedule hammer the token endpoint.
    expect((await call(api, id)).statusCode).toBe(200);
    await refreshDue(t.deps);
    expect(refreshes()).toBe(grantsBefore + 2);

    for (let n = 2; n <= MAX_REFRESH_FAILURES; n++) {
      clock().advance(r.refreshRetryAt!.getTime() - clock().now().getTime());
      await refreshDue(t.deps);
      r = await row(id);
      expect(r.refreshFailures).toBe(n);
    }
    expect(r.status).toBe('error');
    expect(r.statusReason).toContain(`${MAX_REFRESH_FAILURES} attempts in a row`);
    const broken = await call(api, id);
    expect(broken.statusCode).toBe(409);
    expect(broken.json().error.code).toBe('CONNECTION_NOT_CONNECTED');

    // The provider is back: the next round after the back-off refreshes and the connection recovers.
    clock().advance(r.refreshRetryAt!.getTime() - clock().now().getTime());
    await refreshDue(t.deps);
    r = await row(id);
    expect(r).toMatchObject({ status: 'connected', statusReason: null, refreshFailures: 0 });
    expect((await call(api, id)).statusCode).toBe(200);
  }, 60_000);
});

describe('provider 5xx', () => {
  it('retries idempotent calls with back-off and never repeats a POST', async () => {
    const { api, id } = await connect();
    const calls = () => fake.calls(SLUG).length;
    let before = calls();
    fake.failCalls(SLUG, 2, 500);
    const got = await call(api, id);
    expect(got.statusCode, got.body).toBe(200);
    expect(calls()).toBe(before + 3);

    // Still failing after the retries: the provider's own answer comes back (passthrough answers as is).
    before = calls();
    fake.failCalls(SLUG, 3, 503);
    const down = await call(api, id);
    expect(down.statusCode).toBe(503);
    expect(down.headers['x-pier-passthrough']).toBe('1');
    expect(calls()).toBe(before + 3);

    before = calls();
    fake.failCalls(SLUG, 1, 500);
    const post = await api.post('/integrations/passthrough', {
      connectionId: id,
      method: 'POST',
      path: '/objects/people/records',
      body: { data: {} },
    });
    expect(post.statusCode).toBe(500);
    expect(calls()).toBe(before + 1);
  }, 60_000);
});

describe('connection lifecycle webhooks', () => {
  let receiver: FakeServer;
  beforeAll(async () => {
    receiver = await startFake((_req, res) => {
      res.writeHead(204).end();
    });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('tells the app when a connection is created, its revoked grant fails to refresh, and it is deleted', async () => {
    await t.deps.db.orm.delete(integrationConnections);
    const tn = await seedV1Tenant(t.deps);
    const api = v1Client(t, tn.live);
    expect((await api.get('/integrations/webhook')).json().error.code).toBe('WEBHOOK_NOT_SET');
    expect((await t.v1('PUT', '/integrations/webhook', tn.live, { url: 'ftp://x' })).statusCode).toBe(400);
    const set = await t.v1('PUT', '/integrations/webhook', tn.live, { url: `${receiver.url}/hooks` });
    expect(set.statusCode, set.body).toBe(200);
    const secret = set.json().secret as string;
    expect(secret).toMatch(/^whsec_/);

    const events = async () =>
      (await t.deps.db.orm.select().from(webhookDeliveries).where(eq(webhookDeliveries.orgId, tn.org.id)))
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
        .map((r) => ({ id: r.id, type: r.eventType, data: JSON.parse(r.body).data }));

    const { id } = await connect(api);
    expect((await events()).map((e) => e.type)).toEqual(['connection.created']);

    // The end user revokes the grant at the provider: the next refresh cycle finds out and says so.
    fake.revokeGrant(SLUG);
    clock().advance(46_000);
    await refreshDue(t.deps);
    const failed = (await events()).at(-1)!;
    expect(failed).toMatchObject({
      type: 'connection.refresh_failed',
      data: { connectionId: id, connectorSlug: SLUG, endUserId: 'u', status: 'expired' },
    });
    expect(failed.data.statusReason).toContain('invalid_grant');

    expect((await api.del(`/integrations/connections/${id}`)).statusCode).toBe(200);
    expect((await events()).map((e) => e.type)).toEqual([
      'connection.created',
      'connection.refresh_failed',
      'connection.deleted',
    ]);

    // Delivered as a Standard Webhook the app verifies with its secret; no token in it.
    const out = await attemptWebhook(t.deps, failed.id);
    expect(out).toMatchObject({ delivered: true, statusCode: 204 });
    const got = receiver.requests.at(-1)!;
    const raw = JSON.stringify(got.body);
    // The test clock stands ahead of real time, so the signature is checked on its own (the library's
    // verify() would also refuse the timestamp as too new).
    const h = got.headers as Record<string, string>;
    expect(h['webhook-signature']).toBe(
      signWebhook(secret, h['webhook-id']!, Number(h['webhook-timestamp']), raw),
    );
    expect(JSON.parse(raw).type).toBe('connection.refresh_failed');
    expect(raw).not.toMatch(/at_attio|rt_attio/);
  }, 60_000);

  it('sends nothing to an organization without a webhook URL', async () => {
    const tn = await seedV1Tenant(t.deps);
    const api = v1Client(t, tn.live);
    const { id } = await connect(api);
    await api.del(`/integrations/connections/${id}`);
    const rows = await t.deps.db.orm
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.orgId, tn.org.id));
    expect(rows).toEqual([]);
  }, 60_000);
});
