import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of v1 integrations: connectors, connections and their OAuth flow, and what providers answer.

export const integrationsCatalogue = defineCatalogue({
  CONNECTOR_NOT_CONFIGURED: { status: 400, message: 'The connector has no OAuth client on this Pier.' },
  OPERATION_NOT_SUPPORTED: { status: 400, message: 'The connector does not offer these operations.' },
  OAUTH_STATE_INVALID: {
    status: 400,
    message:
      'This authorization link is not valid (unknown, already used or expired); start the connection again.',
  },
  CONNECTION_CONFIG_INVALID: {
    status: 400,
    message: "The connection's variables (connectionConfig) do not fit the provider.",
  },
  CREDENTIALS_REQUIRED: {
    status: 400,
    message: 'This provider connects with an API key or user name and password: send them in credentials.',
  },
  CREDENTIALS_INVALID: { status: 400, message: 'The provider refused these credentials.' },
  PROVIDER_REJECTED: { status: 400, message: 'The provider refused the request.' },
  PASSTHROUGH_PATH_INVALID: {
    status: 400,
    message: "The path must be relative to the provider's API base: no scheme, host, '//' or '..'.",
  },
  DOWNLOAD_URL_INVALID: {
    status: 403,
    message: 'This download link is not valid (altered or expired); ask Pier for a new one.',
  },
  WEBHOOK_SIGNATURE_INVALID: {
    status: 401,
    message: "The provider webhook's signature does not verify with the operator's secret.",
  },
  CONNECT_SESSION_INVALID: {
    status: 403,
    message: 'This Connect link is not valid (altered or expired); the app must start again.',
  },
  PROVIDER_FORBIDDEN: { status: 403, message: 'The provider does not allow this for the connected account.' },
  CONNECTOR_NOT_FOUND: { status: 404, message: 'No connector has that name.' },
  CONNECTION_NOT_FOUND: { status: 404, message: 'Connection not found.' },
  WEBHOOK_NOT_SET: {
    status: 404,
    message: 'No webhook URL is set for integrations in this environment (PUT /v1/integrations/webhook).',
  },
  SYNC_NOT_FOUND: { status: 404, message: 'Sync not found.' },
  PROVIDER_RESOURCE_NOT_FOUND: { status: 404, message: 'The provider has no such resource.' },
  CONNECTION_NOT_CONNECTED: {
    status: 409,
    message: 'This connection is not connected; the end user must connect it again.',
  },
  SYNC_EXISTS: { status: 409, message: 'This connection already syncs this model.' },
  PROVIDER_RATE_LIMITED: { status: 429, message: 'The provider is rate limiting this connection.' },
  PROVIDER_ERROR: { status: 502, message: 'The provider failed.' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof integrationsCatalogue> {}
}

const error = integrationsCatalogue.error;

export const integrationsErrors = {
  connectorNotFound: (slug: string) => error('CONNECTOR_NOT_FOUND', `No connector is named '${slug}'.`),
  connectorNotConfigured: (slug: string, envPrefix: string) =>
    error(
      'CONNECTOR_NOT_CONFIGURED',
      `The connector '${slug}' has no OAuth client on this Pier: the operator sets ${envPrefix}_CLIENT_ID and ${envPrefix}_CLIENT_SECRET.`,
    ),
  connectionNotFound: () => error('CONNECTION_NOT_FOUND'),
  webhookNotSet: () => error('WEBHOOK_NOT_SET'),
  connectionNotConnected: (status: string, reason: string | null) =>
    error(
      'CONNECTION_NOT_CONNECTED',
      `This connection is ${status}${reason ? ` (${reason})` : ''}; the end user must connect it again.`,
    ),
  connectionConfigInvalid: (slug: string, why: string) =>
    error('CONNECTION_CONFIG_INVALID', `${slug}: ${why}.`),
  credentialsRequired: (slug: string, what: string) =>
    error('CREDENTIALS_REQUIRED', `${slug} connects with ${what}: send it in credentials.`),
  credentialsInvalid: (slug: string, why: string) =>
    error('CREDENTIALS_INVALID', `${slug} refused these credentials: ${why}`),
  operationNotSupported: (slug: string, category: string) =>
    error('OPERATION_NOT_SUPPORTED', `The connector '${slug}' does not offer ${category} operations.`),
  oauthStateInvalid: () => error('OAUTH_STATE_INVALID'),
  providerResourceNotFound: (slug: string, message: string) =>
    error('PROVIDER_RESOURCE_NOT_FOUND', `${slug}: ${message}`),
  providerRejected: (slug: string, status: number, message: string) =>
    error('PROVIDER_REJECTED', `${slug} refused the request (HTTP ${status}): ${message}`),
  providerForbidden: (slug: string, message: string) =>
    error('PROVIDER_FORBIDDEN', `${slug} does not allow this for the connected account: ${message}`),
  providerRateLimited: (slug: string, retryAfterSec: number) =>
    error('PROVIDER_RATE_LIMITED', `${slug} is rate limiting this connection; retry in ${retryAfterSec} s.`, {
      'retry-after': String(retryAfterSec),
    }),
  providerError: (slug: string, status: number | undefined, message: string) =>
    error('PROVIDER_ERROR', `${slug} failed${status ? ` (HTTP ${status})` : ''}: ${message}`),
  passthroughPathInvalid: () => error('PASSTHROUGH_PATH_INVALID'),
  connectSessionInvalid: (why: string) =>
    error('CONNECT_SESSION_INVALID', `This Connect link is not valid: ${why}; the app must start again.`),
  downloadUrlInvalid: (why: string) =>
    error('DOWNLOAD_URL_INVALID', `This download link is not valid: ${why}; ask Pier for a new one.`),
  syncNotFound: () => error('SYNC_NOT_FOUND'),
  syncExists: (model: string) => error('SYNC_EXISTS', `This connection already syncs ${model}.`),
  webhookSignatureInvalid: (slug: string, why: string) =>
    error('WEBHOOK_SIGNATURE_INVALID', `${slug} webhook refused: ${why}.`),
} as const;
