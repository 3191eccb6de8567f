import { z } from 'zod';
import { defineRoute, type V1Context } from '../../http/v1-kit.ts';
import * as S from './schema.ts';
import { connectionIdOf, listVia, withOps } from './unified.ts';

// The unified CRM, storage, communication and productivity routes (rest-api-v1.md, "Integrations").
// Lists answer `{ data, nextCursor }` whatever the provider's own paging.

const scope = (c: V1Context) => ({ orgId: c.caller.orgId, environment: c.caller.environment });
const ERR = [
  'CONNECTION_NOT_FOUND',
  'CONNECTION_NOT_CONNECTED',
  'OPERATION_NOT_SUPPORTED',
  'INVALID_CURSOR',
  'PROVIDER_RESOURCE_NOT_FOUND',
  'PROVIDER_REJECTED',
  'PROVIDER_FORBIDDEN',
  'PROVIDER_RATE_LIMITED',
  'PROVIDER_ERROR',
];
const itemParams = z.object({ id: z.string().min(1).max(300) });
const toContactInput = ({ connectionId: _c, ...rest }: z.infer<typeof S.contactBody>) => rest;

const crmRoutes = [
  defineRoute({
    method: 'GET',
    url: '/crm/contacts',
    name: 'integrations.crm.contacts.list',
    summary: 'List CRM contacts',
    query: S.listQuery,
    response: S.page(S.contact),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(c.deps, scope(c), query, 'crm', { name: 'contacts' }, (ops, call, a) =>
        ops.listContacts(call, a),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/crm/contacts',
    name: 'integrations.crm.contacts.create',
    summary: 'Create a CRM contact',
    query: S.connectionQuery,
    body: S.contactBody,
    response: S.contact,
    status: 201,
    errors: ERR,
    handler: async (c, { query, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'crm', (ops, call) =>
        ops.createContact(call, toContactInput(body)),
      ),
  }),
  defineRoute({
    method: 'GET',
    url: '/crm/contacts/:id',
    name: 'integrations.crm.contacts.get',
    summary: 'Get a CRM contact',
    query: S.connectionQuery,
    params: itemParams,
    response: S.contact,
    errors: ERR,
    handler: async (c, { query, params }) =>
      withOps(c.deps, scope(c), connectionIdOf(query), 'crm', (ops, call) => ops.getContact(call, params.id)),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/crm/contacts/:id',
    name: 'integrations.crm.contacts.update',
    summary: 'Update a CRM contact',
    query: S.connectionQuery,
    params: itemParams,
    body: S.contactBody,
    response: S.contact,
    errors: ERR,
    handler: async (c, { query, params, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'crm', (ops, call) =>
        ops.updateContact(call, params.id, toContactInput(body)),
      ),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/crm/contacts/:id',
    name: 'integrations.crm.contacts.delete',
    summary: 'Delete a CRM contact',
    query: S.connectionQuery,
    params: itemParams,
    response: S.success,
    errors: ERR,
    handler: async (c, { query, params }) =>
      withOps(c.deps, scope(c), connectionIdOf(query), 'crm', async (ops, call) => {
        await ops.deleteContact(call, params.id);
        return { success: true as const };
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/crm/companies',
    name: 'integrations.crm.companies.list',
    summary: 'List CRM companies',
    query: S.listQuery,
    response: S.page(S.company),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(c.deps, scope(c), query, 'crm', { name: 'companies' }, (ops, call, a) =>
        ops.listCompanies(call, a),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/crm/companies',
    name: 'integrations.crm.companies.create',
    summary: 'Create a CRM company',
    query: S.connectionQuery,
    body: S.companyBody,
    response: S.company,
    status: 201,
    errors: ERR,
    handler: async (c, { query, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'crm', (ops, call) =>
        ops.createCompany(call, { name: body.name, domain: body.domain, industry: body.industry }),
      ),
  }),
  defineRoute({
    method: 'GET',
    url: '/crm/deals',
    name: 'integrations.crm.deals.list',
    summary: 'List CRM deals',
    query: S.listQuery,
    response: S.page(S.deal),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(c.deps, scope(c), query, 'crm', { name: 'deals' }, (ops, call, a) => ops.listDeals(call, a)),
  }),
  defineRoute({
    method: 'POST',
    url: '/crm/deals',
    name: 'integrations.crm.deals.create',
    summary: 'Create a CRM deal',
    query: S.connectionQuery,
    body: S.dealBody,
    response: S.deal,
    status: 201,
    errors: ERR,
    handler: async (c, { query, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'crm', (ops, call) =>
        ops.createDeal(call, { name: body.name, amount: body.amount, stage: body.stage }),
      ),
  }),
];

const storageRoutes = [
  defineRoute({
    method: 'GET',
    url: '/storage/files',
    name: 'integrations.storage.files.list',
    summary: 'List files of a folder',
    query: S.filesQuery,
    response: S.page(S.file),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(
        c.deps,
        scope(c),
        query,
        'storage',
        { name: 'files', args: { folderId: query.folderId } },
        (ops, call, a) => ops.listFiles(call, a),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/storage/files',
    name: 'integrations.storage.files.upload',
    summary: 'Upload a file (base64)',
    query: S.connectionQuery,
    body: S.uploadBody,
    response: S.file,
    status: 201,
    bodyLimit: 60 * 1024 * 1024,
    errors: ERR,
    handler: async (c, { query, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'storage', (ops, call) =>
        ops.uploadFile(call, {
          name: body.name,
          mimeType: body.mimeType,
          data: Buffer.from(body.data, 'base64'),
          folderId: body.folderId,
        }),
      ),
  }),
  defineRoute({
    method: 'GET',
    url: '/storage/files/:id/download',
    name: 'integrations.storage.files.download',
    summary: 'Download a file (base64)',
    query: S.connectionQuery,
    params: itemParams,
    response: S.download,
    errors: ERR,
    handler: async (c, { query, params }) =>
      withOps(c.deps, scope(c), connectionIdOf(query), 'storage', async (ops, call) => {
        const f = await ops.downloadFile(call, params.id);
        return { data: f.data.toString('base64'), mimeType: f.mimeType, filename: f.filename };
      }),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/storage/files/:id',
    name: 'integrations.storage.files.delete',
    summary: 'Delete a file',
    query: S.connectionQuery,
    params: itemParams,
    response: S.success,
    errors: ERR,
    handler: async (c, { query, params }) =>
      withOps(c.deps, scope(c), connectionIdOf(query), 'storage', async (ops, call) => {
        await ops.deleteFile(call, params.id);
        return { success: true as const };
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/storage/folders',
    name: 'integrations.storage.folders.list',
    summary: 'List folders',
    query: S.foldersQuery,
    response: S.page(S.folder),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(
        c.deps,
        scope(c),
        query,
        'storage',
        { name: 'folders', args: { parentId: query.parentId } },
        (ops, call, a) => ops.listFolders(call, a),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/storage/folders',
    name: 'integrations.storage.folders.create',
    summary: 'Create a folder',
    query: S.connectionQuery,
    body: S.folderBody,
    response: S.folder,
    status: 201,
    errors: ERR,
    handler: async (c, { query, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'storage', (ops, call) =>
        ops.createFolder(call, { name: body.name, parentId: body.parentId }),
      ),
  }),
];

const communicationRoutes = [
  defineRoute({
    method: 'GET',
    url: '/communication/channels',
    name: 'integrations.communication.channels.list',
    summary: 'List channels',
    query: S.listQuery,
    response: S.page(S.channel),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(c.deps, scope(c), query, 'communication', { name: 'channels' }, (ops, call, a) =>
        ops.listChannels(call, a),
      ),
  }),
  defineRoute({
    method: 'GET',
    url: '/communication/messages',
    name: 'integrations.communication.messages.list',
    summary: 'List messages of a channel',
    query: S.messagesQuery,
    response: S.page(S.message),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(
        c.deps,
        scope(c),
        query,
        'communication',
        { name: 'messages', args: { channelId: query.channelId } },
        (ops, call, a) => ops.listMessages(call, a),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/communication/messages',
    name: 'integrations.communication.messages.create',
    summary: 'Post a message',
    query: S.connectionQuery,
    body: S.messageBody,
    response: S.message,
    status: 201,
    errors: ERR,
    handler: async (c, { query, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'communication', (ops, call) =>
        ops.postMessage(call, { channelId: body.channelId, content: body.content }),
      ),
  }),
  defineRoute({
    method: 'GET',
    url: '/communication/users',
    name: 'integrations.communication.users.list',
    summary: 'List workspace users',
    query: S.listQuery,
    response: S.page(S.user),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(c.deps, scope(c), query, 'communication', { name: 'users' }, (ops, call, a) =>
        ops.listUsers(call, a),
      ),
  }),
];

const productivityRoutes = [
  defineRoute({
    method: 'GET',
    url: '/productivity/documents',
    name: 'integrations.productivity.documents.list',
    summary: 'List documents',
    query: S.listQuery,
    response: S.page(S.document),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(c.deps, scope(c), query, 'productivity', { name: 'documents' }, (ops, call, a) =>
        ops.listDocuments(call, a),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/productivity/documents',
    name: 'integrations.productivity.documents.create',
    summary: 'Create a document',
    query: S.connectionQuery,
    body: S.documentBody,
    response: S.document,
    status: 201,
    errors: ERR,
    handler: async (c, { query, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'productivity', (ops, call) =>
        ops.createDocument(call, { title: body.title, content: body.content, parentId: body.parentId }),
      ),
  }),
  defineRoute({
    method: 'GET',
    url: '/productivity/tables',
    name: 'integrations.productivity.tables.list',
    summary: 'List tables',
    query: S.listQuery,
    response: S.page(S.table),
    errors: ERR,
    handler: async (c, { query }) =>
      listVia(c.deps, scope(c), query, 'productivity', { name: 'tables' }, (ops, call, a) =>
        ops.listTables(call, a),
      ),
  }),
  defineRoute({
    method: 'GET',
    url: '/productivity/tables/:tableId/rows',
    name: 'integrations.productivity.rows.list',
    summary: 'List rows of a table',
    query: S.listQuery,
    params: S.tableParams,
    response: S.page(S.row),
    errors: ERR,
    handler: async (c, { query, params }) =>
      listVia(
        c.deps,
        scope(c),
        query,
        'productivity',
        { name: 'rows', args: { tableId: params.tableId } },
        (ops, call, a) => ops.listRows(call, a),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/productivity/tables/:tableId/rows',
    name: 'integrations.productivity.rows.create',
    summary: 'Add a row to a table',
    query: S.connectionQuery,
    params: S.tableParams,
    body: S.rowBody,
    response: S.row,
    status: 201,
    errors: ERR,
    handler: async (c, { query, params, body }) =>
      withOps(c.deps, scope(c), connectionIdOf(query, body), 'productivity', (ops, call) =>
        ops.createRow(call, { tableId: params.tableId, fields: body.fields }),
      ),
  }),
];

export const contentRoutes = [...crmRoutes, ...storageRoutes, ...communicationRoutes, ...productivityRoutes];
