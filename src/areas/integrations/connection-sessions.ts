import { eq } from 'drizzle-orm';
import ipaddr from 'ipaddr.js';
import { ApiError } from '../../core/errors.ts';
import { hostListed, inAllowedRange, type OutboundAllow } from '../../core/net/outbound-allow.ts';
import { recordCall } from './call-log-writer.ts';
import { forgetConnection } from './connection-cache.ts';
import {
  type ConnectionRow,
  type IntegrationDeps,
  operatorConfig,
  readTokens,
  refreshConnection,
  refreshDueAt,
  urlsFor,
} from './connection-tokens.ts';
import { connectorBySlug } from './connectors/index.ts';
import type { Connector } from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';
import { type CallSession, providerCall } from './provider-client.ts';
import { integrationConnections as conns } from './tables.ts';

// Sessions: the ready-to-use provider call the unified operations and passthrough go through, with its
// tokens refreshed before they expire and its per-connection API base.

/** A ready-to-use call for a connected connection; refreshes first when the token is about to expire. */
export async function openSession(d: IntegrationDeps, row: ConnectionRow, opts: { raw?: boolean } = {}) {
  if (row.status !== 'connected')
    throw integrationsErrors.connectionNotConnected(row.status, row.statusReason);
  const connector = connectorBySlug(row.connectorSlug)!;
  let current = row;
  const due = refreshDueAt(row);
  const now = d.clock.now();
  if (due && due <= now && (!row.refreshRetryAt || row.refreshRetryAt <= now)) {
    // The access token this row holds: when another node already replaced it (this row came from the
    // cache), its tokens are used instead of refreshing twice.
    try {
      current = await refreshConnection(d, row.id, readTokens(d, row)?.accessToken);
    } catch (err) {
      // A refresh ahead of expiry that failed for a transient reason: the current token still works.
      const stillValid = row.tokenExpiresAt && row.tokenExpiresAt > d.clock.now();
      if (!(err instanceof ApiError && err.code === 'PROVIDER_ERROR' && stillValid)) throw err;
    }
  }
  const s = session(d, current, connector);
  // lastUsedAt to the minute: one write per connection per minute, not one per provider call.
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > 60_000) {
    await d.db.orm.update(conns).set({ lastUsedAt: now }).where(eq(conns.id, row.id));
    // The cached row (when it is one) now says so too: one write a minute, not one per call.
    row.lastUsedAt = now;
  }
  return { call: providerCall(s, opts), tokens: s.tokens, connector, row: current, urls: s.urls };
}

/**
 * A per-connection API base from the provider's token answer (Salesforce's instance_url, Pipedrive's
 * api_domain): https, or plain http only to a destination the operator opened with OUTBOUND_ALLOW (a gateway,
 * the tests' fakes). Anything else is ignored and the connector's own base is used. The guard still checks
 * the address of every call.
 */
export function connectionApiBase(raw: string, allow: OutboundAllow): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.username || url.password || url.search || url.hash) return null;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && openedByOperator(url.hostname, allow)))
    return null;
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function openedByOperator(hostname: string, allow: OutboundAllow): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(host)) return hostListed(host, allow);
  const addr = ipaddr.process(host);
  return inAllowedRange(addr, allow, null);
}

export function session(d: IntegrationDeps, row: ConnectionRow, connector: Connector): CallSession {
  let tokens = readTokens(d, row) ?? { accessToken: '' };
  const urls = urlsFor(d, connector, row.connectionConfig);
  const overridden = operatorConfig(d, connector.slug).apiUrl;
  const own = overridden ? null : connector.apiUrlFrom?.(row.providerMeta);
  const base = own ? connectionApiBase(own, d.config.outboundAllow) : null;
  if (base) urls.apiUrl = base;
  return {
    connector,
    urls,
    outboundAllow: d.config.outboundAllow,
    tokens: () => tokens,
    record: (e) =>
      recordCall(d, {
        ...e,
        connectionId: row.id,
        secrets: [tokens.accessToken, tokens.refreshToken ?? ''],
        keyParam: connector.placement.in === 'query' ? connector.placement.name : undefined,
      }),
    refresh: async () => {
      if (!tokens.refreshToken) return false;
      const next = await refreshConnection(d, row.id, tokens.accessToken);
      tokens = readTokens(d, next)!;
      return true;
    },
    expire: async (reason) => {
      await d.db.orm
        .update(conns)
        .set({ status: 'expired', statusReason: reason, updatedAt: d.clock.now() })
        .where(eq(conns.id, row.id));
      forgetConnection(d.db, row.id);
      throw integrationsErrors.connectionNotConnected('expired', reason);
    },
  };
}
