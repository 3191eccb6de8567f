import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, desc, eq, isNull, lt, or, type SQL } from 'drizzle-orm';
import ipaddr from 'ipaddr.js';
import type { IntegrationConnectorSlug } from '../../config.ts';
import { ApiError } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { hostListed, inAllowedRange, type OutboundAllow } from '../../core/net/outbound-allow.ts';
import type { Deps } from '../../deps.ts';
import {
  cachedConnection,
  cacheGeneration,
  forgetConnection,
  rememberConnection,
} from './connection-cache.ts';
import { connectorBySlug } from './connectors/index.ts';
import type { Connector, TokenSet } from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';
import {
  authorizationUrl,
  type Client,
  pkcePair,
  providerUrls,
  revokeToken,
  TokenRefused,
  tokenRequest,
} from './oauth.ts';
import { type CallSession, providerCall, safeMessage } from './provider-client.ts';
import { type ConnectionStatus, integrationConnections as conns } from './tables.ts';

// Connections: the OAuth flow that makes one (state bound to the row, PKCE where supported), the
// encrypted tokens, refresh (one at a time per connection across workers, through a lease on the row),
// and the sessions the unified operations and passthrough call the provider through.

export type IntegrationDeps = Pick<Deps, 'db' | 'keyring' | 'clock' | 'config' | 'log'>;
export type Scope = { orgId: string; environment: 'production' | 'sandbox' };
type Row = typeof conns.$inferSelect;

const STATE_TTL_MS = 10 * 60_000;
const REFRESH_LEASE_MS = 30_000;
/** Tokens are refreshed this long before they expire (on use, and by the schedule). */
export const REFRESH_MARGIN_MS = 5 * 60_000;

export const CALLBACK_PATH = '/v1/integrations/oauth/callback';
export const callbackUrl = (d: IntegrationDeps) => `${d.config.publicUrl}${CALLBACK_PATH}`;

export function envPrefix(slug: string): string {
  return `INTEGRATIONS_${slug.toUpperCase().replace(/-/g, '_')}`;
}

export function clientFor(d: IntegrationDeps, c: Connector): Client | null {
  const o = d.config.integrations[c.slug as IntegrationConnectorSlug];
  return o?.clientId && o.clientSecret ? { clientId: o.clientId, clientSecret: o.clientSecret } : null;
}

function urlsFor(d: IntegrationDeps, c: Connector) {
  return providerUrls(c, d.config.integrations[c.slug as IntegrationConnectorSlug] ?? {});
}

export function view(r: Row) {
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

const hashState = (d: IntegrationDeps, state: string) => d.keyring.hashSecret(`oauth-state:${state}`);

export async function createConnection(
  d: IntegrationDeps,
  s: Scope,
  input: { connectorSlug: string; endUserId: string; redirectUrl?: string },
) {
  const connector = connectorBySlug(input.connectorSlug);
  if (!connector) throw integrationsErrors.connectorNotFound(input.connectorSlug);
  const client = clientFor(d, connector);
  if (!client) throw integrationsErrors.connectorNotConfigured(connector.slug, envPrefix(connector.slug));
  const state = crypto.randomBytes(32).toString('base64url');
  const pkce = connector.oauth.pkce ? pkcePair() : null;
  const now = d.clock.now();
  const [row] = await d.db.orm
    .insert(conns)
    .values({
      orgId: s.orgId,
      environment: s.environment,
      connectorSlug: connector.slug,
      endUserId: input.endUserId,
      redirectUrl: input.redirectUrl,
      // Until the end user finishes the provider's consent screen there is no grant to use: `expired`
      // in the contract's vocabulary (docs/decisions/032-integrations-connections.md).
      status: 'expired',
      statusReason: 'authorization pending',
      stateHash: hashState(d, state),
      stateExpiresAt: new Date(now.getTime() + STATE_TTL_MS),
      pkceVerifierEnc: pkce ? d.keyring.encrypt(pkce.verifier) : null,
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: conns.id });
  const url = authorizationUrl(connector, urlsFor(d, connector).authUrl, {
    clientId: client.clientId,
    redirectUri: callbackUrl(d),
    state,
    challenge: pkce?.challenge,
  });
  return { connectionId: row!.id, authorizationUrl: url };
}

/**
 * The provider's redirect back to Pier: `state` finds the connection (only by its HMAC; a used, expired or
 * unknown state is refused), the code is exchanged, the tokens stored encrypted and the account filled in.
 * Returns where to send the end user's browser.
 */
export async function completeAuthorization(
  d: IntegrationDeps,
  q: { state?: string; code?: string; error?: string; error_description?: string },
): Promise<{ location: string | null; connectionId: string; ok: boolean; error?: string }> {
  if (!q.state) throw integrationsErrors.oauthStateInvalid();
  const now = d.clock.now();
  // Claiming the state clears it, so a replayed callback finds nothing.
  const [row] = await d.db.orm
    .update(conns)
    .set({ stateHash: null, updatedAt: now })
    .where(eq(conns.stateHash, hashState(d, q.state)))
    .returning();
  if (row) forgetConnection(d.db, row.id);
  if (!row?.stateExpiresAt || row.stateExpiresAt < now) throw integrationsErrors.oauthStateInvalid();
  const connector = connectorBySlug(row.connectorSlug)!;
  const finish = async (ok: boolean, error?: string) => {
    const location = row.redirectUrl ? redirectWith(row.redirectUrl, row.id, ok, error) : null;
    return { location, connectionId: row.id, ok, error };
  };
  const fail = async (status: ConnectionStatus, reason: string) => {
    await d.db.orm
      .update(conns)
      .set({ status, statusReason: reason, pkceVerifierEnc: null, updatedAt: d.clock.now() })
      .where(eq(conns.id, row.id));
    forgetConnection(d.db, row.id);
    return finish(false, reason);
  };
  if (q.error || !q.code) {
    return fail(
      'error',
      safeMessage(null, [q.error ?? 'no_code', q.error_description].filter(Boolean).join(': ')),
    );
  }
  const client = clientFor(d, connector);
  if (!client) return fail('error', 'the connector is no longer configured');
  const params: Record<string, string> = {
    grant_type: 'authorization_code',
    code: q.code,
    redirect_uri: callbackUrl(d),
  };
  if (row.pkceVerifierEnc) params.code_verifier = d.keyring.decrypt(row.pkceVerifierEnc);
  let tokens: TokenSet;
  try {
    tokens = await tokenRequest(
      connector,
      urlsFor(d, connector).tokenUrl,
      client,
      params,
      d.config.outboundAllow,
    );
  } catch (err) {
    if (err instanceof TokenRefused)
      return fail('error', `the provider refused the authorization code (${safeMessage(null, err.message)})`);
    throw err;
  }
  await storeTokens(d, row.id, tokens, { pkceVerifierEnc: null });
  const fresh = (await load(d, row.id))!;
  try {
    const account = await connector.account(providerCall(session(d, fresh, connector)), tokens);
    await d.db.orm
      .update(conns)
      .set({
        externalAccountId: account.id || null,
        externalAccountName: account.name,
        status: 'connected',
        statusReason: null,
        providerMeta: { ...fresh.providerMeta, ...account.meta },
        updatedAt: d.clock.now(),
      })
      .where(eq(conns.id, row.id));
    forgetConnection(d.db, row.id);
  } catch (err) {
    const reason = err instanceof ApiError ? err.message : 'the account could not be read';
    return fail('error', safeMessage(null, reason));
  }
  return finish(true);
}

function redirectWith(redirectUrl: string, id: string, ok: boolean, error?: string): string {
  const url = new URL(redirectUrl);
  url.searchParams.set('connectionId', id);
  url.searchParams.set('status', ok ? 'success' : 'error');
  if (error) url.searchParams.set('error', error);
  return url.toString();
}

async function storeTokens(
  d: IntegrationDeps,
  id: string,
  t: TokenSet,
  more: Partial<Row> = {},
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

function readTokens(d: IntegrationDeps, r: Row): TokenSet | null {
  if (!r.tokensEnc) return null;
  const t = JSON.parse(d.keyring.decrypt(r.tokensEnc)) as { a: string; r?: string };
  return {
    accessToken: t.a,
    refreshToken: t.r,
    expiresAt: r.tokenExpiresAt ?? undefined,
    extra: r.providerMeta,
  };
}

async function load(d: IntegrationDeps, id: string): Promise<Row | undefined> {
  const [r] = await d.db.orm.select().from(conns).where(eq(conns.id, id));
  return r;
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
): Promise<Row> {
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
  const revokeUrl = urlsFor(d, connector).revokeUrl;
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

/** A ready-to-use call for a connected connection; refreshes first when the token is about to expire. */
export async function openSession(d: IntegrationDeps, row: Row, opts: { raw?: boolean } = {}) {
  if (row.status !== 'connected')
    throw integrationsErrors.connectionNotConnected(row.status, row.statusReason);
  const connector = connectorBySlug(row.connectorSlug)!;
  let current = row;
  if (row.tokenExpiresAt && row.tokenExpiresAt.getTime() - d.clock.now().getTime() < REFRESH_MARGIN_MS) {
    // The access token this row holds: when another node already replaced it (this row came from the
    // cache), its tokens are used instead of refreshing twice.
    current = await refreshConnection(d, row.id, readTokens(d, row)?.accessToken);
  }
  const s = session(d, current, connector);
  // lastUsedAt to the minute: one write per connection per minute, not one per provider call.
  const now = d.clock.now();
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

function session(d: IntegrationDeps, row: Row, connector: Connector): CallSession {
  let tokens = readTokens(d, row) ?? { accessToken: '' };
  const urls = urlsFor(d, connector);
  const overridden = d.config.integrations[connector.slug as IntegrationConnectorSlug]?.apiUrl;
  const own = overridden ? null : connector.apiUrlFrom?.(row.providerMeta);
  const base = own ? connectionApiBase(own, d.config.outboundAllow) : null;
  if (base) urls.apiUrl = base;
  return {
    connector,
    urls,
    outboundAllow: d.config.outboundAllow,
    tokens: () => tokens,
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

/**
 * Refreshes the connection's tokens, one refresh at a time per connection across workers: whoever takes the
 * lease calls the provider; the others wait for the lease to go and use the new tokens. `staleAccess` (the
 * token a 401 refused) skips the refresh when another worker already replaced it.
 */
export async function refreshConnection(d: IntegrationDeps, id: string, staleAccess?: string): Promise<Row> {
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

async function refreshHeld(d: IntegrationDeps, row: Row, staleAccess?: string): Promise<Row> {
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
