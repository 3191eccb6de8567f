import { eq } from 'drizzle-orm';
import { ApiError } from '../../core/errors.ts';
import { forgetConnection } from './connection-cache.ts';
import { session } from './connection-sessions.ts';
import {
  type IntegrationDeps,
  insertConnection,
  load,
  type Scope,
  storeTokens,
} from './connection-tokens.ts';
import type { Connector } from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';
import { providerCall, safeMessage } from './provider-client.ts';
import { type ConnectionStatus, integrationConnections as conns } from './tables.ts';

// Connections to API-key and HTTP Basic providers: no browser step. The end user's key (or user name and
// password) is stored encrypted like a token, checked against the provider's account endpoint where the
// catalogue names one, and the connection is `connected` at once. A key the provider refuses makes no
// connection.

export type Credentials = { apiKey?: string; username?: string; password?: string };

/** The secret a call carries: the key itself, or `user:password` base64-encoded for Basic. */
function secretOf(c: Connector, cr: Credentials | undefined): string {
  const a = c.entry.auth;
  if (a.kind === 'api_key') {
    if (!cr?.apiKey)
      throw integrationsErrors.credentialsRequired(c.slug, `an API key (credentials.apiKey: ${a.label})`);
    return cr.apiKey;
  }
  if (a.kind !== 'basic') throw new Error('not a key-based provider');
  const password = a.passwordLabel === null ? (a.fixedPassword ?? '') : cr?.password;
  if (!cr?.username || password === undefined)
    throw integrationsErrors.credentialsRequired(
      c.slug,
      a.passwordLabel === null
        ? `credentials.username (${a.usernameLabel})`
        : `credentials.username (${a.usernameLabel}) and credentials.password (${a.passwordLabel})`,
    );
  return Buffer.from(`${cr.username}:${password}`).toString('base64');
}

export async function connectWithCredentials(
  d: IntegrationDeps,
  s: Scope,
  connector: Connector,
  input: { endUserId: string; redirectUrl?: string; credentials?: Credentials },
  connectionConfig: Record<string, string>,
) {
  const secret = secretOf(connector, input.credentials);
  const id = await insertConnection(
    d,
    s,
    {
      connectorSlug: connector.slug,
      endUserId: input.endUserId,
      redirectUrl: input.redirectUrl,
      connectionConfig,
    },
    { status: 'connected' },
  );
  await storeTokens(d, id, { accessToken: secret });
  try {
    const fresh = (await load(d, id))!;
    const tokens = { accessToken: secret };
    const account = await connector.account(providerCall(session(d, fresh, connector)), tokens);
    await d.db.orm
      .update(conns)
      .set({
        externalAccountId: account.id || null,
        externalAccountName: account.name,
        updatedAt: d.clock.now(),
      })
      .where(eq(conns.id, id));
    forgetConnection(d.db, id);
  } catch (err) {
    await d.db.orm.delete(conns).where(eq(conns.id, id));
    forgetConnection(d.db, id);
    if (
      err instanceof ApiError &&
      (err.code === 'CONNECTION_NOT_CONNECTED' || err.code === 'PROVIDER_FORBIDDEN')
    )
      throw integrationsErrors.credentialsInvalid(
        connector.slug,
        safeMessage({ tokens: () => ({ accessToken: secret }) }, err.message),
      );
    throw err;
  }
  return {
    connectionId: id,
    authorizationUrl: null as string | null,
    status: 'connected' as ConnectionStatus,
  };
}
