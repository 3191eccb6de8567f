import crypto from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Clock } from './clock.ts';
import type { Keyring } from './crypto.ts';
import type { Db } from './db/client.ts';
import { defineJob, type EnqueueOptions } from './jobs.ts';
import type { OutboundAllow } from './net/outbound-allow.ts';
import { safeFetch } from './net/safe-fetch.ts';
import { webhookAttempts, webhookDeliveries } from './webhook-tables.ts';

// Signed outbound webhooks (Standard Webhooks, https://www.standardwebhooks.com): every attempt carries
// `webhook-id` (constant per event), `webhook-timestamp` (seconds, per attempt) and
// `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. A secret `whsec_<base64>` is used
// as its decoded bytes (the format the standardwebhooks libraries take); any other secret as its UTF-8
// bytes (`new Webhook(secret, { format: 'raw' })`). Failed attempts are retried on a published schedule
// and every attempt is recorded in webhook_attempts.
//
// The target URL is user-supplied: deliveries go through the SSRF-guarded fetch of src/core/net with the
// operator's OUTBOUND_ALLOW (tests open 127.0.0.1 through it); redirects are never followed.

/** Delays before the 2nd … 7th attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h. */
export const WEBHOOK_RETRY_SCHEDULE_SEC = [5, 300, 1800, 7200, 18_000, 36_000];
const TIMEOUT_MS = 10_000;
const MAX_ERROR_LEN = 500;

/** The SSRF-guarded fetch as a webhook delivery uses it: no redirects followed, a small response cap. */
async function guardedFetch(url: string, init: RequestInit, outboundAllow: OutboundAllow): Promise<Response> {
  const res = await safeFetch(url, {
    method: init.method,
    headers: init.headers as Record<string, string>,
    body: init.body as string,
    maxRedirects: 0,
    maxBytes: 64 * 1024,
    timeoutMs: TIMEOUT_MS,
    outboundAllow,
  });
  return new Response(res.status === 204 || res.status === 304 ? null : new Uint8Array(res.body), {
    status: res.status,
    headers: res.headers,
  });
}

export type WebhookDeps = {
  db: Db;
  keyring: Keyring;
  clock: Clock;
  jobs: { enqueue(name: string, data: unknown, opts?: EnqueueOptions): Promise<string | null> };
  config: { outboundAllow: OutboundAllow };
};

export type WebhookInput = {
  orgId?: string;
  environment?: string;
  url: string;
  secret: string;
  type: string;
  data: unknown;
};

export const WEBHOOK_JOB = 'webhooks.deliver';
export type WebhookJobPayloads = { [WEBHOOK_JOB]: { deliveryId: string } };

function signingKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

export function signWebhook(secret: string, id: string, timestampSec: number, body: string): string {
  const mac = crypto.createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSec}.${body}`);
  return `v1,${mac.digest('base64')}`;
}

export function webhookHeaders(secret: string, id: string, timestampSec: number, body: string) {
  return {
    'content-type': 'application/json',
    'user-agent': 'Pier-Webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': signWebhook(secret, id, timestampSec, body),
  };
}

/** Records the event and queues its first attempt; returns the delivery id (also the webhook-id). */
export async function queueWebhook(d: WebhookDeps, input: WebhookInput): Promise<{ id: string }> {
  const now = d.clock.now();
  const body = JSON.stringify({ type: input.type, timestamp: now.toISOString(), data: input.data });
  const [row] = await d.db.orm
    .insert(webhookDeliveries)
    .values({
      orgId: input.orgId,
      environment: input.environment,
      url: input.url,
      secretEnc: d.keyring.encrypt(input.secret),
      eventType: input.type,
      body,
      nextAttemptAt: now,
      createdAt: now,
    })
    .returning({ id: webhookDeliveries.id });
  await d.jobs.enqueue(WEBHOOK_JOB, { deliveryId: row!.id });
  return { id: row!.id };
}

export type AttemptOutcome = {
  delivered: boolean;
  statusCode?: number;
  error?: string;
  nextAttemptAt?: Date;
};

/** Makes one attempt; on failure schedules the next one (or gives up after the last). */
export async function attemptWebhook(d: WebhookDeps, deliveryId: string): Promise<AttemptOutcome> {
  const [row] = await d.db.orm.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
  if (row?.status !== 'pending') return { delivered: row?.status === 'delivered' };
  const attempt = row.attempts + 1;
  const at = d.clock.now();
  const id = `msg_${row.id.replace(/-/g, '')}`;
  const headers = webhookHeaders(
    d.keyring.decrypt(row.secretEnc),
    id,
    Math.floor(at.getTime() / 1000),
    row.body,
  );
  const started = performance.now();
  let statusCode: number | undefined;
  let error: string | undefined;
  try {
    const res = await guardedFetch(
      row.url,
      {
        method: 'POST',
        headers,
        body: row.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      },
      d.config.outboundAllow,
    );
    statusCode = res.status;
    await res.body?.cancel().catch(() => {});
    if (res.status < 200 || res.status > 299) error = `HTTP ${res.status}`;
  } catch (err) {
    error = (err as Error).message.slice(0, MAX_ERROR_LEN);
  }
  const durationMs = Math.round(performance.now() - started);
  await d.db.orm.insert(webhookAttempts).values({ deliveryId, attempt, at, statusCode, error, durationMs });

  if (!error) {
    await d.db.orm
      .update(webhookDeliveries)
      .set({ status: 'delivered', attempts: attempt, nextAttemptAt: null, completedAt: d.clock.now() })
      .where(eq(webhookDeliveries.id, deliveryId));
    return { delivered: true, statusCode };
  }
  const delay = WEBHOOK_RETRY_SCHEDULE_SEC[attempt - 1];
  if (delay === undefined) {
    await d.db.orm
      .update(webhookDeliveries)
      .set({ status: 'failed', attempts: attempt, nextAttemptAt: null, completedAt: d.clock.now() })
      .where(eq(webhookDeliveries.id, deliveryId));
    return { delivered: false, statusCode, error };
  }
  const nextAttemptAt = new Date(at.getTime() + delay * 1000);
  await d.db.orm
    .update(webhookDeliveries)
    .set({ attempts: attempt, nextAttemptAt })
    .where(eq(webhookDeliveries.id, deliveryId));
  await d.jobs.enqueue(WEBHOOK_JOB, { deliveryId }, { startAfter: nextAttemptAt });
  return { delivered: false, statusCode, error, nextAttemptAt };
}

export async function getWebhookDelivery(db: Db, deliveryId: string) {
  const [delivery] = await db.orm
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.id, deliveryId));
  if (!delivery) return null;
  const attempts = await db.orm
    .select()
    .from(webhookAttempts)
    .where(eq(webhookAttempts.deliveryId, deliveryId))
    .orderBy(asc(webhookAttempts.attempt));
  return { delivery, attempts };
}

export const webhookDeliverJob = defineJob({
  name: WEBHOOK_JOB,
  schema: z.object({ deliveryId: z.uuid() }),
  // Retries are scheduled by attemptWebhook itself (the published schedule), not by pg-boss.
  handle: async ({ deliveryId }, { deps }: { deps: WebhookDeps }) => {
    await attemptWebhook(deps, deliveryId);
  },
  concurrency: 2,
});
