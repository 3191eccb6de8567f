import { and, desc, eq, type SQL } from 'drizzle-orm';
import { ApiError } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import {
  cachedConnection,
  cacheGeneration,
  forgetConnection,
  rememberConnection,
} from './connection-cache.ts';
import { emitConnectionEvent } from './connection-events.ts';
import { openSession, session } from './connection-sessions.ts';
import {
  type ConnectionRow,
  clientFor,
  type IntegrationDeps,
  readTokens,
  type Scope,
  urlsFor,
} from './connection-tokens.ts';
import { connectorBySlug } from './connectors/index.ts';
import { integrationsErrors } from './errors.ts';
import { revokeToken } from './oauth.ts';
import { providerCall } from './provider-client.ts';
import { type ConnectionStatus, integrationConnections as conns } from './tables.ts';

// Connections as their owners see them: lookup (fresh, or cached for provider calls), list, test, delete.
// The OAuth flow that makes one is connection-authorize.ts; tokens and refresh connection-tokens.ts; the
// provider-call sessions connection-sessions.ts.

export function view(r: ConnectionRow) {
  return {
    id: r.id,
    connectorSlug: r.connectorSlug,
    status: r.status,
    statusReason: r.statusReason,
    externalAccountId: r.externalAccountId,
    externalAccountName: r.externalAccountName,
    endUserId: r.endUserId,
    createdAt: r.createdAt.toISOString(),
    lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
  };
}

/**
 * The caller's connection. `cached`: the provider-call paths (unified operations, passthrough) may use a row
 * read in this process a few seconds ago (connection-cache.ts); reads shown to people take it fresh.
 */
export async function findConnection(
  d: IntegrationDeps,
  s: Scope,
  id: string,
  opts: { cached?: boolean } = {},
): Promise<ConnectionRow> {
  if (!isUuid(id)) throw integrationsErrors.connectionNotFound();
  const hit = opts.cached ? cachedConnection(d.db, id) : undefined;
  if (hit) {
    if (hit.orgId !== s.orgId || hit.environment !== s.environment)
      throw integrationsErrors.connectionNotFound();
    return hit;
  }
  const generation = cacheGeneration(d.db);
  const [r] = await d.db.orm
    .select()
    .from(conns)
    .where(and(eq(conns.id, id), eq(conns.orgId, s.orgId), eq(conns.environment, s.environment)));
  if (!r) throw integrationsErrors.connectionNotFound();
  rememberConnection(d.db, r, generation);
  return r;
}

export async function getConnection(d: IntegrationDeps, s: Scope, id: string) {
  return view(await findConnection(d, s, id));
}

export async function listConnections(
  d: IntegrationDeps,
  s: Scope,
  q: { connectorId?: string; status?: ConnectionStatus },
) {
  const where: SQL[] = [eq(conns.orgId, s.orgId), eq(conns.environment, s.environment)];
  if (q.connectorId) where.push(eq(conns.connectorSlug, q.connectorId));
  if (q.status) where.push(eq(conns.status, q.status));
  const rows = await d.db.orm
    .select()
    .from(conns)
    .where(and(...where))
    .orderBy(desc(conns.createdAt), desc(conns.id))
    .limit(1000);
  return { data: rows.map(view) };
}

/** Deletes the connection and its tokens; revokes the grant at the provider first where it can. */
export async function deleteConnection(d: IntegrationDeps, s: Scope, id: string) {
  const row = await findConnection(d, s, id);
  const connector = connectorBySlug(row.connectorSlug)!;
  const tokens = readTokens(d, row);
  const client = clientFor(d, connector);
  const revokeUrl = urlsFor(d, connector, row.connectionConfig).revokeUrl;
  if (tokens && client && (connector.revoke || revokeUrl)) {
    try {
      if (revokeUrl)
        await revokeToken(
          connector,
          revokeUrl,
          tokens.refreshToken ?? tokens.accessToken,
          client,
          d.config.outboundAllow,
        );
      else await connector.revoke!(providerCall(session(d, row, connector), { raw: true }), tokens, client);
    } catch (err) {
      d.log.warn(
        { connectionId: id, connector: connector.slug, code: (err as ApiError).code },
        'integrations: revoke failed',
      );
    }
  }
  await d.db.orm.delete(conns).where(eq(conns.id, row.id));
  forgetConnection(d.db, row.id);
  await emitConnectionEvent(d, row, 'connection.deleted', { status: 'deleted', statusReason: null });
  return { success: true as const };
}

export async function testConnection(d: IntegrationDeps, s: Scope, id: string) {
  const row = await findConnection(d, s, id);
  try {
    const { call, tokens, connector } = await openSession(d, row);
    await connector.account(call, tokens());
    return { success: true as const };
  } catch (err) {
    if (err instanceof ApiError) return { success: false as const, error: err.message };
    throw err;
  }
}
