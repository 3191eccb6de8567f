import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, orgForUser, requireRole, slugInput } from '../orgs/index.ts';
import { listCallLogs } from './call-logs.ts';
import { callLogList, callLogsLimit } from './call-logs-v1.ts';
import { createConnection } from './connection-authorize.ts';
import { envPrefix } from './connection-tokens.ts';
import { listConnections, testConnection } from './connections.ts';
import { connectorView } from './connector-view.ts';
import { connectors } from './connectors/index.ts';
import * as S from './schema.ts';

// The dashboard's integrations page and `pier integrations …` (decision 021's pattern): the signed-in user's
// session or personal token, never an API key. Members see connectors and connections and may test one;
// owners and admins start a connection (the OAuth flow for a test end user). Each function calls the
// connections service, scoped to the organization and environment chosen.

const environment = z.enum(['production', 'sandbox']);
const scoped = { orgSlug: slugInput, environment: environment.default('production') };

/** Where the OAuth callback sends the dashboard's browser back to, with the outcome in the query. */
export const DASHBOARD_RETURN_PATH = '/integrations';

async function scopeFor(
  deps: Deps,
  userId: string,
  input: { orgSlug: string; environment: 'production' | 'sandbox' },
) {
  const { org, role } = await orgForUser(deps, userId, input.orgSlug);
  return { scope: { orgId: org.id, environment: input.environment }, role };
}

const connectorInfo = S.connector.extend({
  /** The variables an operator sets to make the connector usable (and the optional overrides). */
  env: z.object({ required: z.array(z.string()), optional: z.array(z.string()) }),
});

export const listIntegrationConnectorsForCli = defineFn({
  name: 'listIntegrationConnectorsForCli',
  summary:
    'Lists the integration connectors, whether the operator configured each, and the variables it needs.',
  auth: { kind: 'user' },
  input: z.strictObject({}),
  output: z.object({ data: z.array(connectorInfo) }),
  errors: [],
  handler: async ({ deps }) => ({
    data: connectors.map((c) => {
      const p = envPrefix(c.slug);
      return {
        ...connectorView(deps, c),
        env: {
          required: c.authType === 'oauth2' ? [`${p}_CLIENT_ID`, `${p}_CLIENT_SECRET`] : [],
          optional: [
            ...(c.authType === 'oauth2' ? [`${p}_AUTH_URL`, `${p}_TOKEN_URL`] : []),
            `${p}_API_URL`,
            ...(c.contentUrl ? [`${p}_CONTENT_URL`] : []),
          ],
        },
      };
    }),
  }),
});

export const listIntegrationConnectionsForCli = defineFn({
  name: 'listIntegrationConnectionsForCli',
  summary: "Lists an environment's integration connections with status, end user and last use (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    connectorSlug: z.string().max(100).optional(),
    status: S.connectionStatus.optional(),
  }),
  output: S.connectionList,
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { scope } = await scopeFor(deps, caller.userId, input);
    return listConnections(deps, scope, { connectorId: input.connectorSlug, status: input.status });
  },
});

export const testIntegrationConnectionForCli = defineFn({
  name: 'testIntegrationConnectionForCli',
  summary:
    'Asks the provider who the connection acts as: `{success}` or `{success:false, error}` (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, connectionId: z.string().trim().min(1).max(100) }),
  output: S.testResult,
  errors: ['ORG_NOT_FOUND', 'CONNECTION_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { scope } = await scopeFor(deps, caller.userId, input);
    return testConnection(deps, scope, input.connectionId);
  },
});

export const listIntegrationCallLogsForDashboard = defineFn({
  name: 'listIntegrationCallLogsForDashboard',
  summary: "A connection's provider calls, newest first (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    connectionId: z.string().trim().min(1).max(100),
    limit: callLogsLimit,
  }),
  output: callLogList,
  errors: ['ORG_NOT_FOUND', 'CONNECTION_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { scope } = await scopeFor(deps, caller.userId, input);
    return listCallLogs(deps, scope, input.connectionId, input.limit);
  },
});

export const connectIntegrationForDashboard = defineFn({
  name: 'connectIntegrationForDashboard',
  minRole: 'manager',
  summary:
    "Starts a connection for a test end user (owners and admins): the browser goes to `authorizationUrl`, and Pier's callback sends it back to the dashboard's integrations page with the outcome.",
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    connectorSlug: z.string().trim().min(1).max(100),
    endUserId: z.string().trim().min(1).max(200).default('dashboard-test'),
    connectionConfig: S.createConnectionBody.shape.connectionConfig,
    credentials: S.createConnectionBody.shape.credentials,
  }),
  output: S.createConnectionResult,
  errors: [
    'ORG_NOT_FOUND',
    'FORBIDDEN',
    'CONNECTOR_NOT_FOUND',
    'CONNECTOR_NOT_CONFIGURED',
    'CONNECTION_CONFIG_INVALID',
    'CREDENTIALS_REQUIRED',
    'CREDENTIALS_INVALID',
  ],
  handler: async ({ deps, caller }, input) => {
    const { scope, role } = await scopeFor(deps, caller.userId, input);
    requireRole(role, MANAGERS);
    const back = new URL(DASHBOARD_RETURN_PATH, `${deps.config.publicUrl}/`);
    back.searchParams.set('env', input.environment);
    return createConnection(deps, scope, {
      connectorSlug: input.connectorSlug,
      endUserId: input.endUserId,
      redirectUrl: back.toString(),
      connectionConfig: input.connectionConfig,
      credentials: input.credentials,
    });
  },
});

export const integrationsDashboardFns = [
  listIntegrationConnectorsForCli,
  listIntegrationConnectionsForCli,
  testIntegrationConnectionForCli,
  connectIntegrationForDashboard,
  listIntegrationCallLogsForDashboard,
];
