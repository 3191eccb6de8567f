import type { ErrorCode } from '../../core/errors.ts';
import { defineRoute, type V1Context } from '../../http/v1-kit.ts';
import * as S from './schema.ts';
import * as Y from './sync-schema.ts';
import {
  createSync,
  deleteSync,
  getSync,
  listRecords,
  listRuns,
  listSyncs,
  triggerSync,
  updateSync,
} from './syncs.ts';

// Syncs and synced records over HTTP (docs/integrations.md, "Syncs"). Mounted with the other integrations
// routes at /v1/integrations.

const scope = (c: V1Context) => ({ orgId: c.caller.orgId, environment: c.caller.environment });
const SYNC_ERR: readonly ErrorCode[] = ['SYNC_NOT_FOUND'];

/** Not MCP tools: set up once by a person, read by the app's code; tools/list has a byte budget (docs/mcp.md). */
export const SYNC_SETUP_OPERATIONS = [
  'integrations.syncs.create',
  'integrations.syncs.list',
  'integrations.syncs.get',
  'integrations.syncs.update',
  'integrations.syncs.delete',
  'integrations.syncs.run',
  'integrations.syncs.runs',
  'integrations.records.list',
];

export const syncRoutes = [
  defineRoute({
    method: 'POST',
    url: '/syncs',
    name: 'integrations.syncs.create',
    summary: "Sync a connection's contacts, companies or deals into Pier on a schedule",
    description:
      'The first run is due at once; each run reports added, updated and deleted records, and sends `sync.records_changed` to the integrations webhook when it changed any.',
    body: Y.createSyncBody,
    response: Y.sync,
    status: 201,
    errors: ['CONNECTION_NOT_FOUND', 'OPERATION_NOT_SUPPORTED', 'SYNC_EXISTS'],
    handler: async (c, { body }) => createSync(c.deps, scope(c), body),
  }),
  defineRoute({
    method: 'GET',
    url: '/syncs',
    name: 'integrations.syncs.list',
    summary: 'List syncs with their last run',
    query: Y.syncsQuery,
    response: Y.syncList,
    errors: ['CONNECTION_NOT_FOUND'],
    handler: async (c, { query }) => listSyncs(c.deps, scope(c), query),
  }),
  defineRoute({
    method: 'GET',
    url: '/syncs/:id',
    name: 'integrations.syncs.get',
    summary: 'Get a sync',
    params: S.idParams,
    response: Y.sync,
    errors: SYNC_ERR,
    handler: async (c, { params }) => getSync(c.deps, scope(c), params.id),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/syncs/:id',
    name: 'integrations.syncs.update',
    summary: "Change a sync's frequency, or pause and resume it",
    params: S.idParams,
    body: Y.updateSyncBody,
    response: Y.sync,
    errors: SYNC_ERR,
    handler: async (c, { params, body }) => updateSync(c.deps, scope(c), params.id, body),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/syncs/:id',
    name: 'integrations.syncs.delete',
    summary: 'Delete a sync and the records it holds',
    params: S.idParams,
    response: S.success,
    errors: SYNC_ERR,
    handler: async (c, { params }) => deleteSync(c.deps, scope(c), params.id),
  }),
  defineRoute({
    method: 'POST',
    url: '/syncs/:id/run',
    name: 'integrations.syncs.run',
    summary: 'Run a sync now',
    params: S.idParams,
    response: Y.syncTriggered,
    status: 202,
    errors: SYNC_ERR,
    handler: async (c, { params }) => triggerSync(c.deps, scope(c), params.id),
  }),
  defineRoute({
    method: 'GET',
    url: '/syncs/:id/runs',
    name: 'integrations.syncs.runs',
    summary: "A sync's last 50 runs: counts and errors",
    params: S.idParams,
    response: Y.syncRunList,
    errors: SYNC_ERR,
    handler: async (c, { params }) => listRuns(c.deps, scope(c), params.id),
  }),
  defineRoute({
    method: 'GET',
    url: '/records',
    name: 'integrations.records.list',
    summary: 'Read synced records changed at or after modifiedAfter',
    query: Y.recordsQuery,
    response: Y.recordPage,
    errors: ['CONNECTION_NOT_FOUND', 'INVALID_CURSOR'],
    handler: async (c, { query }) => listRecords(c.deps, scope(c), query),
  }),
];
