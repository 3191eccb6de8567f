import crypto from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { queueWebhook } from '../../core/webhooks.ts';
import type { Deps } from '../../deps.ts';
import { integrationWebhookSettings as hooks, type integrationConnections } from './tables.ts';

// Connection lifecycle webhooks: connection.created, .refresh_failed, .recovered and .deleted, sent as
// Standard Webhooks (src/core/webhooks.ts: signed, retried on its schedule, every attempt recorded) to the
// URL the organization set for that environment (PUT /v1/integrations/webhook). No URL, no webhook. The
// payload names the connection, never its tokens.

type ConnectionRow = typeof integrationConnections.$inferSelect;
type EventDeps = Pick<Deps, 'db' | 'keyring' | 'clock' | 'config' | 'log' | 'jobs'>;
export type ConnectionEvent =
  | 'connection.created'
  | 'connection.refresh_failed'
  | 'connection.recovered'
  | 'connection.deleted';

export const newWebhookSecret = () => `whsec_${crypto.randomBytes(24).toString('base64')}`;

export async function emitConnectionEvent(
  d: EventDeps,
  row: ConnectionRow,
  type: ConnectionEvent,
  more: { status?: string; statusReason?: string | null } = {},
): Promise<void> {
  await sendAppWebhook(d, row, type, {
    connectionId: row.id,
    connectorSlug: row.connectorSlug,
    endUserId: row.endUserId,
    environment: row.environment,
    status: more.status ?? row.status,
    statusReason: more.statusReason === undefined ? row.statusReason : more.statusReason,
  });
}

/**
 * Queues one Standard Webhook to the URL the organization set for the environment (lifecycle events, sync
 * runs, forwarded provider webhooks); nothing without a URL. A failure to queue is logged, never thrown:
 * the change it reports stands either way and the app can read it.
 */
export async function sendAppWebhook(
  d: EventDeps,
  scope: { orgId: string; environment: 'production' | 'sandbox' },
  type: string,
  data: Record<string, unknown>,
): Promise<boolean> {
  try {
    const [hook] = await d.db.orm
      .select()
      .from(hooks)
      .where(and(eq(hooks.orgId, scope.orgId), eq(hooks.environment, scope.environment)));
    if (!hook) return false;
    await queueWebhook(d, {
      orgId: scope.orgId,
      environment: scope.environment,
      url: hook.url,
      secret: d.keyring.decrypt(hook.secretEnc),
      type,
      data,
    });
    return true;
  } catch (err) {
    d.log.warn(
      { type, connectionId: data.connectionId, err: (err as Error).message },
      'integrations: webhook not queued',
    );
    return false;
  }
}

export async function onRefreshFailed(
  d: EventDeps,
  row: ConnectionRow,
  status: 'expired' | 'error',
  reason: string,
): Promise<void> {
  d.log.warn(
    { connectionId: row.id, connector: row.connectorSlug, status, reason },
    'integrations: connection refresh failed',
  );
  await emitConnectionEvent(d, row, 'connection.refresh_failed', { status, statusReason: reason });
}

export async function onRefreshed(d: EventDeps, before: ConnectionRow, after: ConnectionRow): Promise<void> {
  if (before.status === 'connected') return;
  d.log.info(
    { connectionId: before.id, connector: before.connectorSlug },
    'integrations: connection recovered',
  );
  await emitConnectionEvent(d, after, 'connection.recovered');
}
