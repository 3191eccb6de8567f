import { z } from 'zod';
import { queueWebhook } from '../../core/webhooks.ts';
import type { Deps } from '../../deps.ts';
import { type StoredWebhook, WEBHOOK_EVENTS, type WebhookEvent } from './tables.ts';

// Per-crawl and per-batch webhooks: the caller names a URL, a signing secret and the events it wants
// (started, page, completed, failed); each event is queued on the platform's webhook outbox
// (core/webhooks.ts): Standard Webhooks headers, retried on its schedule, through the SSRF guard. The
// secret is stored encrypted with the resource and never shown again; metadata is echoed in every event
// so the receiver can route it without a lookup.

export { WEBHOOK_EVENTS, type WebhookEvent };

type Scope = { orgId: string; environment: string };

export const webhookBody = z
  .object({
    url: z.url({ protocol: /^https?$/ }).max(2000),
    secret: z
      .string()
      .min(8)
      .max(500)
      .describe('Signing secret; `whsec_<base64>` is used as its decoded bytes (Standard Webhooks).'),
    events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(4).optional().describe('Default: all four.'),
    metadata: z
      .record(z.string(), z.unknown())
      .refine((m) => JSON.stringify(m).length <= 4096, 'metadata must be at most 4 KB of JSON')
      .optional(),
  })
  .strict()
  .describe('Pier: Standard Webhooks for this job (started, page, completed, failed).');
export type WebhookBody = z.infer<typeof webhookBody>;

export function storeWebhook(deps: Deps, body: WebhookBody | undefined): StoredWebhook | null {
  if (!body) return null;
  return {
    url: body.url,
    secretEnc: deps.keyring.encrypt(body.secret),
    events: [...new Set(body.events ?? WEBHOOK_EVENTS)],
    metadata: body.metadata ?? {},
  };
}

/** What a crawl's or batch's answer shows of its webhook: never the secret. */
export function webhookOut(w: StoredWebhook | null) {
  return w ? { url: w.url, events: w.events } : null;
}

/**
 * Queues `webdata.<kind>.<event>` when the job asked for that event. A webhook that cannot be queued never
 * fails the work it reports on: the delivery's own record carries its fate.
 */
export async function emitWebhook(
  deps: Deps,
  scope: Scope,
  kind: 'crawl' | 'batch',
  hook: StoredWebhook | null,
  event: WebhookEvent,
  data: { id: string } & Record<string, unknown>,
): Promise<void> {
  if (!hook?.events.includes(event)) return;
  try {
    await queueWebhook(deps, {
      orgId: scope.orgId,
      environment: scope.environment,
      url: hook.url,
      secret: deps.keyring.decrypt(hook.secretEnc),
      type: `webdata.${kind}.${event}`,
      data: { ...data, metadata: hook.metadata },
    });
  } catch (err) {
    deps.log.warn({ err: (err as Error).message, kind, event }, 'webdata webhook not queued');
  }
}
