import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import type { ManualClock } from './clock.ts';
import { NO_OUTBOUND_ALLOW } from './net/outbound-allow.ts';
import {
  attemptWebhook,
  getWebhookDelivery,
  queueWebhook,
  WEBHOOK_RETRY_SCHEDULE_SEC,
  type WebhookDeps,
} from './webhooks.ts';

type Received = { headers: http.IncomingHttpHeaders; body: string };

let t: TestApp;
let server: http.Server;
let url: string;
const received: Received[] = [];
let answer = 200;

beforeAll(async () => {
  // The receiver runs on 127.0.0.1, which the guard opens only because the operator setting lists it.
  t = await testApp({ env: { OUTBOUND_ALLOW: '127.0.0.1/32' } });
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.statusCode = answer;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await t?.close();
});

/** Deps whose queue only records what would be enqueued, so the test drives each attempt itself. */
function webhookDeps(): WebhookDeps & { queued: { data: unknown; startAfter?: Date }[] } {
  const queued: { data: unknown; startAfter?: Date }[] = [];
  return {
    db: t.deps.db,
    keyring: t.deps.keyring,
    clock: t.deps.clock,
    config: t.deps.config,
    queued,
    jobs: {
      enqueue: async (_name, data, opts) => {
        queued.push({ data, startAfter: opts?.startAfter });
        return 'job';
      },
    },
  };
}

describe('outbound webhooks', () => {
  it('signs with Standard Webhooks headers that the standardwebhooks package verifies', async () => {
    const secret = `whsec_${crypto.randomBytes(24).toString('base64')}`;
    const d = webhookDeps();
    answer = 200;
    const { id } = await queueWebhook(d, { url, secret, type: 'email.delivered', data: { emailId: 'e1' } });
    expect(d.queued).toEqual([{ data: { deliveryId: id }, startAfter: undefined }]);
    const out = await attemptWebhook(d, id);
    expect(out).toMatchObject({ delivered: true, statusCode: 200 });
    const got = received.at(-1)!;
    const headers = {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    };
    expect(new Webhook(secret).verify(got.body, headers)).toMatchObject({
      type: 'email.delivered',
      data: { emailId: 'e1' },
    });
    expect(() =>
      new Webhook(`whsec_${crypto.randomBytes(24).toString('base64')}`).verify(got.body, headers),
    ).toThrow();
    expect(() => new Webhook(secret).verify(`${got.body} `, headers)).toThrow();

    // A plain secret (e.g. a workflow run's webhook.secret) is used as raw bytes.
    const plain = 'my-shared-secret';
    const second = await queueWebhook(d, { url, secret: plain, type: 'run.completed', data: {} });
    await attemptWebhook(d, second.id);
    const raw = received.at(-1)!;
    expect(
      new Webhook(Buffer.from(plain).toString('base64')).verify(raw.body, {
        'webhook-id': String(raw.headers['webhook-id']),
        'webhook-timestamp': String(raw.headers['webhook-timestamp']),
        'webhook-signature': String(raw.headers['webhook-signature']),
      }),
    ).toMatchObject({ type: 'run.completed' });
  });

  it('retries on the published schedule, records every attempt and gives up after the last', async () => {
    const d = webhookDeps();
    const clock = t.clock as ManualClock;
    answer = 503;
    const { id } = await queueWebhook(d, { url, secret: 'whsec_c2VjcmV0', type: 'x', data: {} });
    const gaps: number[] = [];
    for (let i = 0; i <= WEBHOOK_RETRY_SCHEDULE_SEC.length; i++) {
      const before = clock.now().getTime();
      const out = await attemptWebhook(d, id);
      expect(out.delivered).toBe(false);
      if (out.nextAttemptAt) {
        gaps.push((out.nextAttemptAt.getTime() - before) / 1000);
        clock.set(out.nextAttemptAt);
      }
    }
    expect(gaps).toEqual(WEBHOOK_RETRY_SCHEDULE_SEC);
    expect(d.queued.slice(1).map((q) => q.startAfter)).toHaveLength(WEBHOOK_RETRY_SCHEDULE_SEC.length);
    const rec = await getWebhookDelivery(t.deps.db, id);
    expect(rec!.delivery.status).toBe('failed');
    expect(rec!.attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual(
      Array.from({ length: 7 }, (_, i) => [i + 1, 503, 'HTTP 503']),
    );
    // All attempts of one event share the webhook-id.
    const ids = new Set(received.slice(-7).map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    // A finished delivery is not attempted again.
    expect((await attemptWebhook(d, id)).delivered).toBe(false);
    expect((await getWebhookDelivery(t.deps.db, id))!.attempts).toHaveLength(7);
  });

  it('refuses a loopback target without OUTBOUND_ALLOW (SSRF guard) and records why', async () => {
    const d = { ...webhookDeps(), config: { outboundAllow: NO_OUTBOUND_ALLOW } };
    answer = 200;
    const before = received.length;
    const { id } = await queueWebhook(d, { url, secret: 'plain-secret', type: 'x.y', data: {} });
    const out = await attemptWebhook(d, id);
    expect(out.delivered).toBe(false);
    expect(received.length).toBe(before);
    const { attempts } = (await getWebhookDelivery(t.deps.db, id))!;
    expect(attempts[0]!.error).toMatch(/not allowed|private|loopback/i);
  });

  it('records network errors and succeeds on a later attempt', async () => {
    const d = webhookDeps();
    const { id } = await queueWebhook(d, {
      url: 'http://127.0.0.1:1/closed',
      secret: 's',
      type: 'x',
      data: {},
    });
    const first = await attemptWebhook(d, id);
    expect(first.delivered).toBe(false);
    expect(first.error).toBeTruthy();
    const rec = await getWebhookDelivery(t.deps.db, id);
    expect(rec!.attempts[0]!.statusCode).toBeNull();
    expect(rec!.delivery.status).toBe('pending');
  });
});
