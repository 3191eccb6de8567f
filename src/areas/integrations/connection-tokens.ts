import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, gt, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { IntegrationClientConfig } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { forgetConnection } from './connection-cache.ts';
import { onRefreshed, onRefreshFailed } from './connection-events.ts';
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

export type IntegrationDeps = Pick<Deps, 'db' | 'keyring' | 'clock' | 'config' | 'log' | 'jobs'>;
export type Scope = { orgId: string; environment: 'production' | 'sandbox' };
export type ConnectionRow = typeof conns.$inferSelect;

const REFRESH_LEASE_MS = 30_000;
/**
 * A token is refreshed once this share of its lifetime has passed, or this long before it expires,
 * whichever comes later: a 1-hour token at 55 min, a 60-second token at 45 s (not before every call).
 */
export const REFRESH_MARGIN_MS = 5 * 60_000;
export const REFRESH_AT_FRACTION = 0.75;
/** Transient refresh failures in a row before the connection is marked broken (`error`). */
export const MAX_REFRESH_FAILURES = 5;
/** Back-off between refresh rounds after a transient failure: 30 s, 1, 2, 4, 8 … min, at most 30 min. */
export const refreshBackoffMs = (failures: number) => Math.min(30_000 * 2 ** (failures - 1), 30 * 60_000);

/** When the connection's access token is due for a refresh; null for tokens without an expiry. */
export function refreshDueAt(r: Pick<ConnectionRow, 'tokenExpiresAt' | 'tokenIssuedAt'>): Date | null {
  if (!r.tokenExpiresAt) return null;
  const expires = r.tokenExpiresAt.getTime();
  const byMargin = expires - REFRESH_MARGIN_MS;
  if (!r.tokenIssuedAt) return new Date(byMargin);
  const issued = r.tokenIssuedAt.getTime();
  return new Date(Math.max(byMargin, issued + (expires - issued) * REFRESH_AT_FRACTION));
}

export function envPrefix(slug: string): string {
  return `INTEGRATIONS_${slug.toUpperCase().replace(/-/g, '_')}`;
}

/** The operator's settings for one provider (INTEGRATIONS_<SLUG>_…). */
export function operatorConfig(d: IntegrationDeps, slug: string): IntegrationClientConfig {
  return d.config.integrations[envPrefix(slug).slice('INTEGRATIONS_'.length)] ?? {};
}

export function clientFor(d: IntegrationDeps, c: Connector): Client | null {
  const o = operatorConfig(d, c.slug);
  return o.clientId && o.clientSecret ? { clientId: o.clientId, clientSecret: o.clientSecret } : null;
}

/** Whether end users can connect: OAuth providers need the operator's client; key-based ones need nothing. */
export function isConfigured(d: IntegrationDeps, c: Connector): boolean {
  return c.authType !== 'oauth2' || clientFor(d, c) !== null;
}

/** The provider's URLs for one connection (its variables filled in) or, without a row, its defaults. */
export function urlsFor(d: IntegrationDeps, c: Connector, vars: Record<string, string> = {}) {
  return providerUrls(c, operatorConfig(d, c.slug), vars);
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
      tokenIssuedAt: now,
      refreshFailures: 0,
      refreshRetryAt: null,
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

/** What every new connection row says: whose it is, which provider, for whom, where to send them back. */
export type NewConnection = {
  connectorSlug: string;
  endUserId: string;
  redirectUrl?: string;
  connectionConfig: Record<string, string>;
};

/** Inserts a connection (the OAuth flow's pending one, or a key-based one already connected); its id. */
export async function insertConnection(
  d: IntegrationDeps,
  s: Scope,
  base: NewConnection,
  state: Pick<typeof conns.$inferInsert, 'status'> & Partial<typeof conns.$inferInsert>,
): Promise<string> {
  const now = d.clock.now();
  const [row] = await d.db.orm
    .insert(conns)
    .values({ orgId: s.orgId, environment: s.environment, ...base, ...state, createdAt: now, updatedAt: now })
    .returning({ id: conns.id });
  return row!.id;
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
    const grant = { grant_type: 'refresh_token', refresh_token: tokens.refreshToken };
    const url = urlsFor(d, connector, row.connectionConfig).tokenUrl;
    let next: TokenSet;
    try {
      next = await tokenRequest(connector, url, client, grant, d.config.outboundAllow);
    } catch (err) {
      // A transient failure (5xx, 429, unreachable) is tried once more at once, then left to the schedule.
      if (!(err instanceof TokenRefused) || err.grantDead) throw err;
      await sleep(500);
      next = await tokenRequest(connector, url, client, grant, d.config.outboundAllow);
    }
    await storeTokens(d, row.id, next, { ...release, status: 'connected', statusReason: null }, tokens);
    const fresh = (await load(d, row.id))!;
    await onRefreshed(d, row, fresh);
    return fresh;
  } catch (err) {
    if (err instanceof TokenRefused && err.grantDead) {
      const reason = `the provider refused the token refresh (${safeMessage(tokens ? { tokens: () => tokens } : null, err.message)})`;
      await d.db.orm
        .update(conns)
        .set({ ...release, status: 'expired', statusReason: reason, updatedAt: d.clock.now() })
        .where(eq(conns.id, row.id));
      forgetConnection(d.db, row.id);
      await onRefreshFailed(d, row, 'expired', reason);
      throw integrationsErrors.connectionNotConnected('expired', reason);
    }
    if (!(err instanceof TokenRefused)) {
      await d.db.orm.update(conns).set(release).where(eq(conns.id, row.id));
      forgetConnection(d.db, row.id);
      throw err;
    }
    // Transient: back off; after MAX_REFRESH_FAILURES rounds in a row the connection is broken (`error`),
    // and the schedule keeps trying at the longest back-off so it can recover by itself.
    const failures = row.refreshFailures + 1;
    const message = safeMessage(null, err.message);
    const broken = failures >= MAX_REFRESH_FAILURES;
    const reason = `the token could not be refreshed (${failures} attempts in a row; last: ${message})`;
    await d.db.orm
      .update(conns)
      .set({
        ...release,
        refreshFailures: failures,
        refreshRetryAt: new Date(d.clock.now().getTime() + refreshBackoffMs(failures)),
        ...(broken ? { status: 'error' as const, statusReason: reason, updatedAt: d.clock.now() } : {}),
      })
      .where(eq(conns.id, row.id));
    forgetConnection(d.db, row.id);
    if (broken && row.status === 'connected') await onRefreshFailed(d, row, 'error', reason);
    throw integrationsErrors.providerError(connector.slug, undefined, message);
  }
}

/**
 * The refresh schedule's work list: connected connections whose token is due (refreshDueAt), and broken
 * ones still being retried after transient failures, each past its back-off.
 */
export async function dueForRefresh(d: IntegrationDeps, limit = 100): Promise<string[]> {
  const now = d.clock.now();
  const at = sql`${now.toISOString()}::timestamptz`;
  const due = sql`greatest(${conns.tokenIssuedAt} + (${conns.tokenExpiresAt} - ${conns.tokenIssuedAt}) * ${REFRESH_AT_FRACTION}, ${conns.tokenExpiresAt} - make_interval(secs => ${REFRESH_MARGIN_MS / 1000})) <= ${at}`;
  const rows = await d.db.orm
    .select({ id: conns.id })
    .from(conns)
    .where(
      and(
        isNotNull(conns.tokenExpiresAt),
        or(eq(conns.status, 'connected'), and(eq(conns.status, 'error'), gt(conns.refreshFailures, 0))),
        or(isNull(conns.refreshRetryAt), lte(conns.refreshRetryAt, now)),
        due,
      ),
    )
    .limit(limit);
  return rows.map((r) => r.id);
}
