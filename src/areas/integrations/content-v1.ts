import type { z } from 'zod';
import * as S from './schema.ts';
import { deleted, itemParams, unifiedRoutes } from './unified-route-kit.ts';

// The unified CRM, storage, communication and productivity routes (rest-api-v1.md, "Integrations"), one
// declaration per operation (the shared shape is in unified-route-kit.ts). Lists answer `{ data, nextCursor }`
// whatever the provider's own paging. The order is the OpenAPI document's.

const toContactInput = ({ connectionId: _c, ...rest }: z.infer<typeof S.contactBody>) => rest;

const crm = unifiedRoutes('crm');
const crmRoutes = [
  crm.list({
    url: '/crm/contacts',
    resource: 'contacts',
    summary: 'List CRM contacts',
    query: S.listQuery,
    item: S.contact,
    run: (ops, call, a) => ops.listContacts(call, a),
  }),
  crm.call({
    method: 'POST',
    url: '/crm/contacts',
    name: 'contacts.create',
    summary: 'Create a CRM contact',
    body: S.contactBody,
    response: S.contact,
    status: 201,
    run: (ops, call, { body }) => ops.createContact(call, toContactInput(body)),
  }),
  crm.call({
    method: 'GET',
    url: '/crm/contacts/:id',
    name: 'contacts.get',
    summary: 'Get a CRM contact',
    params: itemParams,
    response: S.contact,
    run: (ops, call, { params }) => ops.getContact(call, params.id),
  }),
  crm.call({
    method: 'PATCH',
    url: '/crm/contacts/:id',
    name: 'contacts.update',
    summary: 'Update a CRM contact',
    params: itemParams,
    body: S.contactBody,
    response: S.contact,
    run: (ops, call, { params, body }) => ops.updateContact(call, params.id, toContactInput(body)),
  }),
  crm.call({
    method: 'DELETE',
    url: '/crm/contacts/:id',
    name: 'contacts.delete',
    summary: 'Delete a CRM contact',
    params: itemParams,
    response: S.success,
    run: (ops, call, { params }) => ops.deleteContact(call, params.id).then(() => deleted),
  }),
  crm.list({
    url: '/crm/companies',
    resource: 'companies',
    summary: 'List CRM companies',
    query: S.listQuery,
    item: S.company,
    run: (ops, call, a) => ops.listCompanies(call, a),
  }),
  crm.call({
    method: 'POST',
    url: '/crm/companies',
    name: 'companies.create',
    summary: 'Create a CRM company',
    body: S.companyBody,
    response: S.company,
    status: 201,
    run: (ops, call, { body }) =>
      ops.createCompany(call, { name: body.name, domain: body.domain, industry: body.industry }),
  }),
  crm.list({
    url: '/crm/deals',
    resource: 'deals',
    summary: 'List CRM deals',
    query: S.listQuery,
    item: S.deal,
    run: (ops, call, a) => ops.listDeals(call, a),
  }),
  crm.call({
    method: 'POST',
    url: '/crm/deals',
    name: 'deals.create',
    summary: 'Create a CRM deal',
    body: S.dealBody,
    response: S.deal,
    status: 201,
    run: (ops, call, { body }) =>
      ops.createDeal(call, { name: body.name, amount: body.amount, stage: body.stage }),
  }),
];

const storage = unifiedRoutes('storage');
const storageRoutes = [
  storage.list({
    url: '/storage/files',
    resource: 'files',
    summary: 'List files of a folder',
    query: S.filesQuery,
    item: S.file,
    args: ({ query }) => ({ folderId: query.folderId }),
    run: (ops, call, a) => ops.listFiles(call, a),
  }),
  storage.call({
    method: 'POST',
    url: '/storage/files',
    name: 'files.upload',
    summary: 'Upload a file (base64)',
    body: S.uploadBody,
    response: S.file,
    status: 201,
    bodyLimit: 60 * 1024 * 1024,
    run: (ops, call, { body }) =>
      ops.uploadFile(call, {
        name: body.name,
        mimeType: body.mimeType,
        data: Buffer.from(body.data, 'base64'),
        folderId: body.folderId,
      }),
  }),
  storage.call({
    method: 'GET',
    url: '/storage/files/:id/download',
    name: 'files.download',
    summary: 'Download a file (base64)',
    params: itemParams,
    response: S.download,
    run: async (ops, call, { params }) => {
      const f = await ops.downloadFile(call, params.id);
      return { data: f.data.toString('base64'), mimeType: f.mimeType, filename: f.filename };
    },
  }),
  storage.call({
    method: 'DELETE',
    url: '/storage/files/:id',
    name: 'files.delete',
    summary: 'Delete a file',
    params: itemParams,
    response: S.success,
    run: (ops, call, { params }) => ops.deleteFile(call, params.id).then(() => deleted),
  }),
  storage.list({
    url: '/storage/folders',
    resource: 'folders',
    summary: 'List folders',
    query: S.foldersQuery,
    item: S.folder,
    args: ({ query }) => ({ parentId: query.parentId }),
    run: (ops, call, a) => ops.listFolders(call, a),
  }),
  storage.call({
    method: 'POST',
    url: '/storage/folders',
    name: 'folders.create',
    summary: 'Create a folder',
    body: S.folderBody,
    response: S.folder,
    status: 201,
    run: (ops, call, { body }) => ops.createFolder(call, { name: body.name, parentId: body.parentId }),
  }),
];

const communication = unifiedRoutes('communication');
const communicationRoutes = [
  communication.list({
    url: '/communication/channels',
    resource: 'channels',
    summary: 'List channels',
    query: S.listQuery,
    item: S.channel,
    run: (ops, call, a) => ops.listChannels(call, a),
  }),
  communication.list({
    url: '/communication/messages',
    resource: 'messages',
    summary: 'List messages of a channel',
    query: S.messagesQuery,
    item: S.message,
    args: ({ query }) => ({ channelId: query.channelId }),
    run: (ops, call, a) => ops.listMessages(call, a),
  }),
  communication.call({
    method: 'POST',
    url: '/communication/messages',
    name: 'messages.create',
    summary: 'Post a message',
    body: S.messageBody,
    response: S.message,
    status: 201,
    run: (ops, call, { body }) => ops.postMessage(call, { channelId: body.channelId, content: body.content }),
  }),
  communication.list({
    url: '/communication/users',
    resource: 'users',
    summary: 'List workspace users',
    query: S.listQuery,
    item: S.user,
    run: (ops, call, a) => ops.listUsers(call, a),
  }),
];

const productivity = unifiedRoutes('productivity');
const productivityRoutes = [
  productivity.list({
    url: '/productivity/documents',
    resource: 'documents',
    summary: 'List documents',
    query: S.listQuery,
    item: S.document,
    run: (ops, call, a) => ops.listDocuments(call, a),
  }),
  productivity.call({
    method: 'POST',
    url: '/productivity/documents',
    name: 'documents.create',
    summary: 'Create a document',
    body: S.documentBody,
    response: S.document,
    status: 201,
    run: (ops, call, { body }) =>
      ops.createDocument(call, { title: body.title, content: body.content, parentId: body.parentId }),
  }),
  productivity.list({
    url: '/productivity/tables',
    resource: 'tables',
    summary: 'List tables',
    query: S.listQuery,
    item: S.table,
    run: (ops, call, a) => ops.listTables(call, a),
  }),
  productivity.list({
    url: '/productivity/tables/:tableId/rows',
    resource: 'rows',
    summary: 'List rows of a table',
    query: S.listQuery,
    params: S.tableParams,
    item: S.row,
    args: ({ params }) => ({ tableId: params.tableId }),
    run: (ops, call, a) => ops.listRows(call, a),
  }),
  productivity.call({
    method: 'POST',
    url: '/productivity/tables/:tableId/rows',
    name: 'rows.create',
    summary: 'Add a row to a table',
    params: S.tableParams,
    body: S.rowBody,
    response: S.row,
    status: 201,
    run: (ops, call, { params, body }) =>
      ops.createRow(call, { tableId: params.tableId, fields: body.fields }),
  }),
];

export const contentRoutes = [...crmRoutes, ...storageRoutes, ...communicationRoutes, ...productivityRoutes];
