import type { Deps } from '../../deps.ts';
import type { integrationConnections } from './tables.ts';

type ConnectionRow = typeof integrationConnections.$inferSelect;
type IntegrationDeps = Pick<Deps, 'db' | 'keyring' | 'clock' | 'config' | 'log'>;

// What happens to a connection that its app should hear about: a refresh that failed for good (the end user
// must reconnect) and one that succeeded again after failures. Logged here, without tokens.

export async function onRefreshFailed(
  d: IntegrationDeps,
  row: ConnectionRow,
  status: 'expired' | 'error',
  reason: string,
): Promise<void> {
  d.log.warn(
    { connectionId: row.id, connector: row.connectorSlug, status, reason },
    'integrations: connection refresh failed',
  );
}

export async function onRefreshed(
  d: IntegrationDeps,
  before: ConnectionRow,
  _after: ConnectionRow,
): Promise<void> {
  if (before.status === 'connected' && before.refreshFailures === 0) return;
  d.log.info(
    { connectionId: before.id, connector: before.connectorSlug },
    'integrations: connection recovered',
  );
}
