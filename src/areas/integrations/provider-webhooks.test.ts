import crypto from 'node:crypto';
import { PassThrough } from 'node:stream';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppReceiver } from '../../../test/app-webhooks.ts';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';
import { seedOperator, seedV1Tenant } from '../../../test/seed.ts';
import { integrationConnections, integrationProviderWebhookTokens } from './tables.ts';

// Provider webhooks: one public URL per connector, each request signed the provider's way (HubSpot v3 with
// the app's client secret, Slack's signing secret, Notion's verification token), mapped to the connections
// of the account it is about and forwarded to their organization as a Standard Webhook (verified here with
// the `standardwebhooks` package). A bad or stale signature is answered 401, logged, and goes nowhere.

const SLACK_SECRET = 'slack-signing-secret';
const NOTION_SECRET = 'secret_notion_verification';
let p: Providers & { close(): Promise<void> };
let t: TestApp;
let hooks: Awaited<ReturnType<typeof startAppReceiver>>;
const logs: string[] = [];

beforeAll(async () => {
  [p, hooks] = await Promise.all([startProviders(), startAppReceiver()]);
  const logStream = new PassThrough();
  logStream.on('data', (c: Buffer) => logs.push(...c.toString().split('\n').filter(Boolean)));
  t = await integrationsApp(p, {
    logStream,
    env: {
      INTEGRATIONS_SLACK_WEBHOOK_SECRET: SLACK_SECRET,
      INTEGRATIONS_NOTION_WEBHOOK_SECRET: NOTION_SECRET,
    },
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await p?.close();
  await hooks?.close();
});

const URL_OF = (slug: string) => `http://pier.test/v1/integrations/webhooks/${slug}`;
const post = (slug: string, body: string, headers: Record<string, string>) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/integrations/webhooks/${slug}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });

function hubspotSigned(body: string, secret = 'hs-secret', ts = Date.now()) {
  const sig = crypto
    .createHmac('sha256', secret)
    .update(`POST${URL_OF('hubspot')}${body}${ts}`)
    .digest('base64');
  return { 'x-hubspot-signature-v3': sig, 'x-hubspot-request-timestamp': String(ts) };
}
function slackSigned(body: string, secret = SLACK_SECRET, ts = Math.floor(Date.now() / 1000)) {
  const sig = crypto.createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
  return { 'x-slack-signature': `v0=${sig}`, 'x-slack-request-timestamp': String(ts) };
}
const notionSigned = (body: string, secret = NOTION_SECRET) => ({
  'x-notion-signature': `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`,
});

async function org() {
  const { api, tenant: tn } = await tenant(t);
  const set = await t.v1('PUT', '/integrations/webhook', tn.live, { url: hooks.url });
  return { api, orgId: tn.org.id, secret: set.json().secret as string };
}

describe('provider webhooks', () => {
  it('forwards a HubSpot v3-signed batch to the connection of its portal, and drops a bad signature', async () => {
    const a = await org();
    const b = await org();
    const mine = await connect(t, a.api, p.hubspot, 'hubspot');
    // B's connection is to another HubSpot portal: nothing of portal 4242 reaches B.
    const theirs = await connect(t, b.api, p.hubspot, 'hubspot');
    await t.deps.db.orm
      .update(integrationConnections)
      .set({ externalAccountId: '9999' })
      .where(eq(integrationConnections.id, theirs));
    await hooks.deliver(t, a.orgId, a.secret);
    await hooks.deliver(t, b.orgId, b.secret);

    const events = [
      {
        eventId: 1,
        subscriptionId: 7,
        portalId: 4242,
        occurredAt: 1,
        subscriptionType: 'contact.creation',
        objectId: 501,
      },
      {
        eventId: 2,
        subscriptionId: 8,
        portalId: 4242,
        occurredAt: 2,
        subscriptionType: 'contact.propertyChange',
        objectId: 502,
        propertyName: 'email',
        propertyValue: 'x@acme.test',
      },
    ];
    const body = JSON.stringify(events);
    const ok = await post('hubspot', body, hubspotSigned(body));
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({ received: 2, forwarded: 1 });
    const got = await hooks.deliver(t, a.orgId, a.secret);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      type: 'provider.webhook',
      data: {
        connectionId: mine,
        connectorSlug: 'hubspot',
        endUserId: 'user-1',
        events: [
          { type: 'contact.creation', payload: events[0] },
          { type: 'contact.propertyChange', payload: events[1] },
        ],
      },
    });
    expect(await hooks.deliver(t, b.orgId, b.secret)).toEqual([]);

    // Altered body, wrong secret, a replay from ten minutes ago, no signature: 401, logged, not forwarded.
    const tampered = body.replace('501', '666');
    const refused = [
      await post('hubspot', tampered, hubspotSigned(body)),
      await post('hubspot', body, hubspotSigned(body, 'not-the-secret')),
      await post('hubspot', body, hubspotSigned(body, 'hs-secret', Date.now() - 10 * 60_000)),
      await post('hubspot', body, {}),
    ];
    for (const res of refused) {
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json().error.code).toBe('WEBHOOK_SIGNATURE_INVALID');
    }
    expect(refused[2]!.json().error.message).toContain('5 minutes');
    expect(await hooks.deliver(t, a.orgId, a.secret)).toEqual([]);
    const logged = logs.filter((l) => l.includes('provider webhook refused')).map((l) => JSON.parse(l));
    expect(logged).toHaveLength(4);
    expect(logged[0]).toMatchObject({ connector: 'hubspot', reason: 'signature mismatch' });
    expect(logs.join('\n')).not.toContain('x@acme.test');
  }, 60_000);

  it("answers Slack's URL check and forwards a signed event to the team's connection", async () => {
    const a = await org();
    const conn = await connect(t, a.api, p.slack, 'slack');
    await hooks.deliver(t, a.orgId, a.secret);
    const check = JSON.stringify({ token: 'x', challenge: 'c-123', type: 'url_verification' });
    const answered = await post('slack', check, slackSigned(check));
    expect(answered.statusCode).toBe(200);
    expect(answered.json()).toEqual({ challenge: 'c-123' });
    expect((await post('slack', check, slackSigned(check, 'wrong'))).statusCode).toBe(401);

    const event = JSON.stringify({
      token: 'x',
      team_id: 'T0001',
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: 'Ev1',
      event_time: 1,
      event: { type: 'message', channel: 'C1', user: 'U1', text: 'hello', ts: '1.000' },
    });
    const res = await post('slack', event, slackSigned(event));
    expect(res.json()).toEqual({ received: 1, forwarded: 1 });
    const [got] = await hooks.deliver(t, a.orgId, a.secret);
    expect(got).toMatchObject({
      type: 'provider.webhook',
      data: { connectionId: conn, connectorSlug: 'slack', events: [{ type: 'message' }] },
    });
    const stale = await post(
      'slack',
      event,
      slackSigned(event, SLACK_SECRET, Math.floor(Date.now() / 1000) - 600),
    );
    expect(stale.statusCode).toBe(401);
  }, 60_000);

  it("forwards a Notion event signed with the verification token, to the workspace's connection", async () => {
    const a = await org();
    const conn = await connect(t, a.api, p.notion, 'notion');
    await hooks.deliver(t, a.orgId, a.secret);
    const body = JSON.stringify({
      id: 'evt-1',
      timestamp: new Date().toISOString(),
      workspace_id: 'ws-1',
      subscription_id: 'sub-1',
      integration_id: 'int-1',
      type: 'page.content_updated',
      entity: { id: 'page-1', type: 'page' },
    });
    const res = await post('notion', body, notionSigned(body));
    expect(res.statusCode, res.body).toBe(200);
    const [got] = await hooks.deliver(t, a.orgId, a.secret);
    expect(got).toMatchObject({
      type: 'provider.webhook',
      data: { connectionId: conn, connectorSlug: 'notion', events: [{ type: 'page.content_updated' }] },
    });
    expect((await post('notion', body, notionSigned(body, 'other'))).statusCode).toBe(401);
  }, 60_000);

  it('says which connectors take webhooks; unknown ones are refused', async () => {
    const { api } = await tenant(t);
    const list = (await api.get('/integrations/connectors')).json().data as {
      slug: string;
      supports: { webhooks: boolean; syncs: boolean };
    }[];
    expect(
      list
        .filter((c) => c.supports.webhooks)
        .map((c) => c.slug)
        .sort(),
    ).toEqual(['hubspot', 'notion', 'slack']);
    expect(list.find((c) => c.slug === 'hubspot')!.supports.syncs).toBe(true);
    expect((await post('nope', '{}', {})).json().error.code).toBe('CONNECTOR_NOT_FOUND');
    const attio = await post('attio', '{}', {});
    expect(attio.statusCode).toBe(400);
    expect(attio.json().error.code).toBe('OPERATION_NOT_SUPPORTED');
    // Without the operator's secret nothing verifies (a Notion app before its token is set).
    const bare = await integrationsApp(p);
    try {
      const res = await bare.app.inject({
        method: 'POST',
        url: '/v1/integrations/webhooks/slack',
        headers: { 'content-type': 'application/json', ...slackSigned('{}') },
        payload: '{}',
      });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.message).toContain('INTEGRATIONS_SLACK_WEBHOOK_SECRET');
    } finally {
      await bare.close();
    }
  }, 60_000);

  it("keeps Notion's verification token out of the log, encrypted, for the operator alone to read", async () => {
    const bareLogs: string[] = [];
    const logStream = new PassThrough();
    logStream.on('data', (c: Buffer) => bareLogs.push(...c.toString().split('\n').filter(Boolean)));
    const bare = await integrationsApp(p, { logStream });
    try {
      const token = `secret_${crypto.randomBytes(16).toString('hex')}`;
      const verification = await bare.app.inject({
        method: 'POST',
        url: '/v1/integrations/webhooks/notion',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ verification_token: token }),
      });
      expect(verification.statusCode).toBe(200);
      expect(verification.body).not.toContain(token);
      const said = bareLogs.filter((l) => l.includes('sent its webhook verification token'));
      expect(said).toHaveLength(1);
      expect(JSON.parse(said[0]!).msg).toContain('pier admin integrations webhook-tokens --connector notion');
      expect(bareLogs.join('\n')).not.toContain(token);
      // At rest only its ciphertext.
      const [row] = await bare.deps.db.orm.select().from(integrationProviderWebhookTokens);
      expect(row!.tokenEnc).not.toContain(token);

      const op = (await seedOperator(bare.deps)).token;
      const read = await bare.call('adminListProviderWebhookTokens', { connector: 'notion' }, op);
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json().items).toEqual([{ connector: 'notion', token, receivedAt: expect.any(String) }]);
      expect(
        (await bare.call('adminListProviderWebhookTokens', { connector: 'slack' }, op)).json().items,
      ).toEqual([]);
      // A signed-in person, even an organization's owner, or a v1 API key: refused.
      const { owner, live } = await seedV1Tenant(bare.deps);
      const user = await bare.call('adminListProviderWebhookTokens', {}, owner.token);
      expect(user.statusCode).toBe(403);
      expect(user.body).not.toContain(token);
      expect((await bare.call('adminListProviderWebhookTokens', {}, live)).statusCode).toBeGreaterThanOrEqual(
        401,
      );
      expect((await bare.call('adminListProviderWebhookTokens', {})).statusCode).toBe(401);
      // The public URL proves nothing: a stored token does not verify a webhook (the env secret does).
      const event = JSON.stringify({ workspace_id: 'ws-1', type: 'page.created' });
      const forged = await bare.app.inject({
        method: 'POST',
        url: '/v1/integrations/webhooks/notion',
        headers: { 'content-type': 'application/json', ...notionSigned(event, token) },
        payload: event,
      });
      expect(forged.statusCode).toBe(401);
      expect(forged.json().error.message).toContain('INTEGRATIONS_NOTION_WEBHOOK_SECRET');
      // Anyone may post one, so a flood keeps only the newest ten.
      for (let i = 0; i < 12; i++)
        await bare.app.inject({
          method: 'POST',
          url: '/v1/integrations/webhooks/notion',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ verification_token: `stray_${i}` }),
        });
      const kept = (await bare.call('adminListProviderWebhookTokens', {}, op)).json().items;
      expect(kept).toHaveLength(10);
      expect(kept.map((k: { token: string }) => k.token)).toContain('stray_11');
    } finally {
      await bare.close();
    }
  }, 60_000);
});
