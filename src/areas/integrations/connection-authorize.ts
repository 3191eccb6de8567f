import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { ApiError } from '../../core/errors.ts';
import { forgetConnection } from './connection-cache.ts';
import { resolveConnectionConfig } from './connection-config.ts';
import { type Credentials, connectWithCredentials } from './connection-credentials.ts';
import { emitConnectionEvent } from './connection-events.ts';
import { session } from './connection-sessions.ts';
import {
  clientFor,
  envPrefix,
  type IntegrationDeps,
  insertConnection,
  load,
  type Scope,
  storeTokens,
  urlsFor,
} from './connection-tokens.ts';
import { connectorBySlug } from './connectors/index.ts';
import type { TokenSet } from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';
import { authorizationUrl, pkcePair, TokenRefused, tokenRequest } from './oauth.ts';
import { providerCall, safeMessage } from './provider-client.ts';
import { type ConnectionStatus, integrationConnections as conns } from './tables.ts';

// The OAuth flow that makes a connection: the authorization URL (state bound to the row, PKCE where
// supported), then the provider's callback, which exchanges the code and fills in the account.

const STATE_TTL_MS = 10 * 60_000;

export const CALLBACK_PATH = '/v1/integrations/oauth/callback';
export const callbackUrl = (d: IntegrationDeps) => `${d.config.publicUrl}${CALLBACK_PATH}`;

const hashState = (d: IntegrationDeps, state: string) => d.keyring.hashSecret(`oauth-state:${state}`);

export type CreateConnectionInput = {
  connectorSlug: string;
  endUserId: string;
  redirectUrl?: string;
  connectionConfig?: Record<string, string>;
  credentials?: Credentials;
};

export async function createConnection(d: IntegrationDeps, s: Scope, input: CreateConnectionInput) {
  const connector = connectorBySlug(input.connectorSlug);
  if (!connector) throw integrationsErrors.connectorNotFound(input.connectorSlug);
  const connectionConfig = resolveConnectionConfig(connector, input.connectionConfig);
  if (connector.authType !== 'oauth2')
    return connectWithCredentials(d, s, connector, input, connectionConfig);
  const client = clientFor(d, connector);
  if (!client) throw integrationsErrors.connectorNotConfigured(connector.slug, envPrefix(connector.slug));
  const state = crypto.randomBytes(32).toString('base64url');
  const pkce = connector.oauth?.pkce ? pkcePair() : null;
  const now = d.clock.now();
  const id = await insertConnection(
    d,
    s,
    {
      connectorSlug: connector.slug,
      endUserId: input.endUserId,
      redirectUrl: input.redirectUrl,
      connectionConfig,
    },
    {
      // Until the end user finishes the provider's consent screen there is no grant to use: `expired`
      // in the contract's vocabulary (docs/decisions/032-integrations-connections.md).
      status: 'expired',
      statusReason: 'authorization pending',
      stateHash: hashState(d, state),
      stateExpiresAt: new Date(now.getTime() + STATE_TTL_MS),
      pkceVerifierEnc: pkce ? d.keyring.encrypt(pkce.verifier) : null,
    },
  );
  const url = authorizationUrl(connector, urlsFor(d, connector, connectionConfig).authUrl, {
    clientId: client.clientId,
    redirectUri: callbackUrl(d),
    state,
    challenge: pkce?.challenge,
  });
  return {
    connectionId: id,
    authorizationUrl: url as string | null,
    status: 'expired' as ConnectionStatus,
  };
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
      urlsFor(d, connector, row.connectionConfig).tokenUrl,
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
    await emitConnectionEvent(d, (await load(d, row.id))!, 'connection.created');
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
