import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { IntegrationConnectorSlug } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { forgetConnection } from './connection-cache.ts';
import { connectorBySlug } from './connectors/index.ts';
import type { Connector, TokenSet } from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';
import { type Client, providerUrls, TokenRefused, tokenRequest } from './oauth.ts';
import { safeMessage } from './provider-client.ts';
import { integrationConnections as conns } from './tables.ts';

// A connection's provider settings and its tokens: stored encrypted, read back, and refreshed one at a
// time per connection across workers (through a lease on the row). The lowest of the connection files: the
// OAuth flow (connection-authorize.ts), the sessions (connection-sessions.ts) and the lookups
// (connections.ts) build on it.

export type IntegrationDeps = Pick<Deps, 'db' | 'keyring' | 'clock' | 'config' | 'log'>;
export type Scope = { orgId: string; environment: 'production' | 'sandbox' };
export type ConnectionRow = typeof conns.$inferSelect;

const REFRESH_LEASE_MS = 30_000;
/** Tokens are refreshed this long before they expire (on use, and by the schedule). */
export const REFRESH_MARGIN_MS = 5 * 60_000;

export function envPrefix(slug: string): string {
  return `INTEGRATIONS_${slug.toUpperCase().replace(/-/g, '_')}`;
}

export function clientFor(d: IntegrationDeps, c: Connector): Client | null {
  const o = d.config.integrations[c.slug as IntegrationConnectorSlug];
  return o?.clientId && o.clientSecret ? { clientId: o.clientId, clientSecret: o.clientSecret } : null;
}

export function urlsFor(d: IntegrationDeps, c: Connector) {
  return providerUrls(c, d.config.integrations[c.slug as IntegrationConnectorSlug] ?? {});
}

export async function storeTokens(
  d: IntegrationDeps,
  id: string,
  t: TokenSet,
  more: Partial<ConnectionRow> = {},
  previous?: TokenSet,
) {
  const now = d.clock.now();
  const expiresAt = t.expiresAt ?? (t.expiresInSec ? new Date(now.getTime() + t.expiresInSec * 1000) : null);
  // A refresh answer without a refresh_token keeps the old one (Google, HubSpot rotate only sometimes).
  const refreshToken = t.refreshToken ?? previous?.refreshToken;
  // Merged over what the connection already knew: a refresh answer that leaves out instance_url or
  // api_domain (or the account facts) keeps the connection's API base.
  const providerMeta = { ...previous?.extra, ...pickMeta(t.extra) };
  await d.db.orm
    .update(conns)
    .set({
      tokensEnc: d.keyring.encrypt(JSON.stringify({ a: t.accessToken, r: refreshToken })),
      tokenExpiresAt: expiresAt,
      ...(Object.keys(providerMeta).length ? { providerMeta } : {}),
      updatedAt: now,
      ...more,
    })
    .where(eq(conns.id, id));
  forgetConnection(d.db, id);
}

/** The non-secret facts of a token answer worth keeping (account names, instance URLs). */
function pickMeta(extra?: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (/token|secret|password/i.test(k)) continue;
    out[k] = v;
  }
  return out;
}

export function readTokens(d: IntegrationDeps, r: ConnectionRow): TokenSet | null {
  if (!r.tokensEnc) return null;
  const t = JSON.parse(d.keyring.decrypt(r.tokensEnc)) as { a: string; r?: string };
  return {
    accessToken: t.a,
    refreshToken: t.r,
    expiresAt: r.tokenExpiresAt ?? undefined,
    extra: r.providerMeta,
  };
}

export async function load(d: IntegrationDeps, id: string): Promise<ConnectionRow | undefined> {
  const [r] = await d.db.orm.select().from(conns).where(eq(conns.id, id));
  return r;
}

/**
 * Refreshes the connection's tokens, one refresh at a time per connection across workers: whoever takes the
 * lease calls the provider; the others wait for the lease to go and use the new tokens. `staleAccess` (the
 * token a 401 refused) skips the refresh when another worker already replaced it.
 */
export async function refreshConnection(
  d: IntegrationDeps,
  id: string,
  staleAccess?: string,
): Promise<ConnectionRow> {
  const deadline = Date.now() + REFRESH_LEASE_MS;
  for (;;) {
    const now = d.clock.now();
    const [leased] = await d.db.orm
      .update(conns)
      .set({ refreshLeaseUntil: new Date(now.getTime() + REFRESH_LEASE_MS) })
      .where(and(eq(conns.id, id), or(isNull(conns.refreshLeaseUntil), lt(conns.refreshLeaseUntil, now))))
      .returning();
    forgetConnection(d.db, id);
    if (leased) return refreshHeld(d, leased, staleAccess);
    if (Date.now() > deadline)
      throw integrationsErrors.providerError('integrations', undefined, 'a token refresh is taking too long');
    await sleep(50);
    const cur = await load(d, id);
    if (!cur) throw integrationsErrors.connectionNotFound();
    // The other worker finished: its tokens are the ones to use.
    if (!cur.refreshLeaseUntil) {
      if (cur.status !== 'connected')
        throw integrationsErrors.connectionNotConnected(cur.status, cur.statusReason);
      return cur;
    }
  }
}

async function refreshHeld(
  d: IntegrationDeps,
  row: ConnectionRow,
  staleAccess?: string,
): Promise<ConnectionRow> {
  const release = { refreshLeaseUntil: null };
  const connector = connectorBySlug(row.connectorSlug)!;
  const tokens = readTokens(d, row);
  try {
    if (staleAccess && tokens && tokens.accessToken !== staleAccess) {
      // Another worker refreshed meanwhile: its tokens are the ones to use; give the lease back.
      await d.db.orm.update(conns).set(release).where(eq(conns.id, row.id));
      forgetConnection(d.db, row.id);
      return { ...row, refreshLeaseUntil: null };
    }
    if (!tokens?.refreshToken) throw new TokenRefused('the connection has no refresh token', true);
    const client = clientFor(d, connector);
    if (!client) throw new TokenRefused('the connector is no longer configured', true);
    const next = await tokenRequest(
      connector,
      urlsFor(d, connector).tokenUrl,
      client,
      { grant_type: 'refresh_token', refresh_token: tokens.refreshToken },
      d.config.outboundAllow,
    );
    await storeTokens(d, row.id, next, { ...release, status: 'connected', statusReason: null }, tokens);
    return (await load(d, row.id))!;
  } catch (err) {
    if (err instanceof TokenRefused && err.grantDead) {
      const reason = `the provider refused the token refresh (${safeMessage(tokens ? { tokens: () => tokens } : null, err.message)})`;
      await d.db.orm
        .update(conns)
        .set({ ...release, status: 'expired', statusReason: reason, updatedAt: d.clock.now() })
        .where(eq(conns.id, row.id));
      forgetConnection(d.db, row.id);
      throw integrationsErrors.connectionNotConnected('expired', reason);
    }
    await d.db.orm.update(conns).set(release).where(eq(conns.id, row.id));
    forgetConnection(d.db, row.id);
    if (err instanceof TokenRefused)
      throw integrationsErrors.providerError(connector.slug, undefined, safeMessage(null, err.message));
    throw err;
  }
}

/** Connections whose access token expires within the margin (the refresh schedule's work list). */
export async function dueForRefresh(d: IntegrationDeps, limit = 100): Promise<string[]> {
  const soon = new Date(d.clock.now().getTime() + REFRESH_MARGIN_MS);
  const rows = await d.db.orm
    .select({ id: conns.id })
    .from(conns)
    .where(and(eq(conns.status, 'connected'), lt(conns.tokenExpiresAt, soon)))
    .limit(limit);
  return rows.map((r) => r.id);
}
