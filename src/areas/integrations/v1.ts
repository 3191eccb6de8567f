import type { FastifyInstance } from 'fastify';
import type { ErrorCode } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import {
  apiKeyCaller,
  defineRoute,
  defineV1Routes,
  operationDoc,
  type V1Context,
} from '../../http/v1-kit.ts';
import { callLogsRoute } from './call-logs-v1.ts';
import { connectSessionRoute, registerConnect } from './connect-v1.ts';
import { completeAuthorization, createConnection } from './connection-authorize.ts';
import type { Scope } from './connection-tokens.ts';
import { deleteConnection, getConnection, listConnections, testConnection } from './connections.ts';
import { connectorView } from './connector-view.ts';
import { connectorBySlug, connectorsIn } from './connectors/index.ts';
import { contentRoutes } from './content-v1.ts';
import { downloadUrlRoute, registerDownloads } from './downloads-v1.ts';
import { integrationsErrors } from './errors.ts';
import { passthrough } from './passthrough.ts';
import * as S from './schema.ts';
import { syncRoutes } from './sync-v1.ts';
import { deleteWebhookSettings, getWebhookSettings, setWebhookSettings } from './webhook-settings.ts';

// HTTP only: the zod contract of each operation and a call into the service. Mounted at /v1/integrations.

export const scopeOf = (c: V1Context): Scope => ({
  orgId: c.caller.orgId,
  environment: c.caller.environment,
});

const CONN_ERRORS: readonly ErrorCode[] = ['CONNECTION_NOT_FOUND'];

const webhookRoutes = [
  defineRoute({
    method: 'GET',
    url: '/webhook',
    name: 'integrations.webhook.get',
    summary: 'Get the connection lifecycle webhook URL and signing secret',
    response: S.webhookSettings,
    errors: ['WEBHOOK_NOT_SET'],
    handler: async (c) => getWebhookSettings(c.deps, scopeOf(c)),
  }),
  defineRoute({
    method: 'PUT',
    url: '/webhook',
    name: 'integrations.webhook.set',
    summary: 'Set the connection lifecycle webhook URL',
    description:
      'connection.created, connection.refresh_failed, connection.recovered and connection.deleted are sent there as Standard Webhooks signed with `secret`.',
    body: S.webhookSettingsBody,
    response: S.webhookSettings,
    errors: [],
    handler: async (c, { body }) => setWebhookSettings(c.deps, scopeOf(c), body),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/webhook',
    name: 'integrations.webhook.delete',
    summary: 'Stop the connection lifecycle webhooks',
    response: S.success,
    errors: ['WEBHOOK_NOT_SET'],
    handler: async (c) => deleteWebhookSettings(c.deps, scopeOf(c)),
  }),
];

const connectionRoutes = [
  defineRoute({
    method: 'GET',
    url: '/connectors',
    name: 'integrations.connectors.list',
    summary: 'List connectors',
    query: S.connectorsQuery,
    response: S.connectorList,
    errors: [],
    handler: async (c, { query }) => ({
      data: connectorsIn(query.category).map((x) => connectorView(c.deps, x)),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/connectors/:slug',
    name: 'integrations.connectors.get',
    summary: 'Get a connector',
    params: S.slugParams,
    response: S.connector,
    errors: ['CONNECTOR_NOT_FOUND'],
    handler: async (c, { params }) => {
      const x = connectorBySlug(params.slug);
      if (!x) throw integrationsErrors.connectorNotFound(params.slug);
      return connectorView(c.deps, x);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/connections',
    name: 'integrations.connections.list',
    summary: 'List connections',
    query: S.connectionsQuery,
    response: S.connectionList,
    errors: [],
    handler: async (c, { query }) => listConnections(c.deps, scopeOf(c), query),
  }),
  defineRoute({
    method: 'POST',
    url: '/connections',
    name: 'integrations.connections.create',
    summary: 'Create a connection (starts the OAuth flow, or connects with an API key)',
    description:
      "OAuth providers: send the end user's browser to `authorizationUrl`; after the provider's consent screen Pier's callback (`/v1/integrations/oauth/callback`) stores the tokens and sends the browser to `redirectUrl` with `connectionId` and `status` (`success` or `error`, with `error`). API-key and Basic providers: send `credentials`; the connection is checked and `connected` at once (`authorizationUrl` null). Providers with variables (a subdomain, a region) take them in `connectionConfig`.",
    body: S.createConnectionBody,
    response: S.createConnectionResult,
    status: 201,
    errors: [
      'CONNECTOR_NOT_FOUND',
      'CONNECTOR_NOT_CONFIGURED',
      'CONNECTION_CONFIG_INVALID',
      'CREDENTIALS_REQUIRED',
      'CREDENTIALS_INVALID',
    ],
    handler: async (c, { body }) => createConnection(c.deps, scopeOf(c), body),
  }),
  defineRoute({
    method: 'GET',
    url: '/connections/:id',
    name: 'integrations.connections.get',
    summary: 'Get a connection',
    params: S.idParams,
    response: S.connection,
    errors: CONN_ERRORS,
    handler: async (c, { params }) => getConnection(c.deps, scopeOf(c), params.id),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/connections/:id',
    name: 'integrations.connections.delete',
    summary: 'Delete a connection (revokes the grant at the provider where it can)',
    params: S.idParams,
    response: S.success,
    errors: CONN_ERRORS,
    handler: async (c, { params }) => deleteConnection(c.deps, scopeOf(c), params.id),
  }),
  defineRoute({
    method: 'POST',
    url: '/connections/:id/test',
    name: 'integrations.connections.test',
    summary: 'Test a connection against the provider',
    params: S.idParams,
    response: S.testResult,
    errors: CONN_ERRORS,
    handler: async (c, { params }) => testConnection(c.deps, scopeOf(c), params.id),
  }),
];

/**
 * Passthrough answers the provider's status, headers and body as they came, so it is written by hand; the
 * plugin's hooks (API key, rate limit, Idempotency-Key) cover it like any other route. Pier's own failures
 * (bad path, unknown connection) are the usual error envelope, told apart by `x-pier-passthrough` missing.
 * Mounted at /v1/integrations (a v1 plugin of the manifest).
 */
function registerPassthrough(app: FastifyInstance, deps: Deps): void {
  const { errorResponses: _e, ...doc } = operationDoc('integrations', {
    name: 'integrations.passthrough',
    summary: 'Raw call to the provider',
    description:
      "`path` is relative to the connector's API base and cannot leave it. The answer is the provider's: its status, content-type and body, with `x-pier-passthrough: 1`.",
    errors: [
      'CONNECTION_NOT_FOUND',
      'CONNECTION_NOT_CONNECTED',
      'PASSTHROUGH_PATH_INVALID',
      'PROVIDER_RATE_LIMITED',
    ],
  });
  app.post('/passthrough', { schema: { ...doc, body: S.passthroughBody } }, async (req, reply) => {
    const caller = apiKeyCaller(req);
    const out = await passthrough(
      deps,
      { orgId: caller.orgId, environment: caller.environment },
      req.body as Parameters<typeof passthrough>[2],
    );
    reply.status(out.status).headers({ ...out.headers, 'x-pier-passthrough': '1' });
    return reply.send(out.body);
  });
}

/** The provider's redirect back: public (no API key), documented in docs/integrations.md. */
function registerCallback(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/oauth/callback',
    { schema: { hide: true, querystring: S.callbackQuery }, config: { v1Public: true } },
    async (req, reply) => {
      const out = await completeAuthorization(deps, req.query as never);
      if (out.location) return reply.redirect(out.location, 302);
      reply.header('content-type', 'text/html; charset=utf-8');
      const text = out.ok ? 'Connected. You can close this window.' : `The connection failed: ${out.error}`;
      return reply.send(`<!doctype html><meta charset="utf-8"><title>Pier</title><p>${escapeHtml(text)}</p>`);
    },
  );
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );

export const integrationsV1 = defineV1Routes({
  name: 'integrations',
  prefix: '/integrations',
  routes: [
    ...connectionRoutes,
    ...webhookRoutes,
    ...contentRoutes,
    downloadUrlRoute,
    ...syncRoutes,
    callLogsRoute,
    connectSessionRoute,
  ],
});

/** The routes written by hand: the public OAuth callback (a redirect) and passthrough (the provider's answer). */
export async function integrationsHandRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  registerCallback(app, opts.deps);
  registerPassthrough(app, opts.deps);
  registerDownloads(app, opts.deps);
  registerConnect(app, opts.deps);
}
