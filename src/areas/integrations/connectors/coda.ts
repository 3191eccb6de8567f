import { errors } from '../../../core/errors.ts';
import type { ConnectorCode, Document, ProviderCall, Row, Table } from './types.ts';
import { iso, messageAt, str } from './types.ts';

// Coda API v1 (https://coda.io/developers/apis/v1): docs are documents (GET /docs, POST /docs {title}),
// tables live in docs (GET /docs/{doc}/tables?tableTypes=table), rows in tables (GET
// /docs/{doc}/tables/{table}/rows with useColumnNames=true, so `values` are keyed by column name). Lists page
// with `limit` and `nextPageToken` (sent back as `pageToken`). Row inserts are asynchronous: POST …/rows
// `{ rows: [ { cells: [ { column, value } ] } ] }` answers 202 with `addedRowIds`. A unified table id is
// `<docId>:<tableId>`. Errors: `{ statusCode, statusMessage, message }`.

type Doc = { id: string; name: string; browserLink?: string; createdAt?: string; updatedAt?: string };
type CTable = { id: string; name: string; createdAt?: string };
type CRow = { id: string; name?: string; values: Record<string, unknown>; createdAt?: string };
type List<T> = { items: T[]; nextPageToken?: string };

function splitTable(id: string): { doc: string; table: string } {
  const i = id.indexOf(':');
  if (i <= 0)
    throw errors.validation(
      "Coda table ids look like '<docId>:<tableId>' (as listed by /productivity/tables).",
    );
  return { doc: id.slice(0, i), table: id.slice(i + 1) };
}
const rowsPath = (id: string) => {
  const { doc, table } = splitTable(id);
  return `/docs/${encodeURIComponent(doc)}/tables/${encodeURIComponent(table)}/rows`;
};
const doc = (d: Doc): Document => ({
  id: d.id,
  title: str(d.name),
  url: str(d.browserLink),
  createdAt: iso(d.createdAt),
  updatedAt: iso(d.updatedAt),
  rawData: d as unknown as Record<string, unknown>,
});

async function tablesOf(call: ProviderCall, docId: string): Promise<CTable[]> {
  return (
    await call({
      method: 'GET',
      path: `/docs/${encodeURIComponent(docId)}/tables`,
      query: { tableTypes: 'table', limit: 100 },
    })
  ).json<List<CTable>>().items;
}

export const coda: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'message', 'statusMessage'),
  productivity: {
    async listDocuments(call, a) {
      const b = (
        await call({ method: 'GET', path: '/docs', query: { limit: a.limit, pageToken: a.cursor } })
      ).json<List<Doc>>();
      return { items: b.items.map(doc), next: b.nextPageToken ?? null };
    },
    async createDocument(call, input) {
      const res = await call({
        method: 'POST',
        path: '/docs',
        json: { title: input.title, ...(input.parentId ? { folderId: input.parentId } : {}) },
      });
      return doc(res.json<Doc>());
    },
    async listTables(call, a) {
      // One page of docs, with every table of each: the cursor is the docs' page token.
      const docs = (
        await call({ method: 'GET', path: '/docs', query: { limit: a.limit, pageToken: a.cursor } })
      ).json<List<Doc>>();
      const items: Table[] = [];
      for (const d of docs.items)
        for (const t of await tablesOf(call, d.id))
          items.push({
            id: `${d.id}:${t.id}`,
            name: t.name,
            createdAt: iso(t.createdAt),
            rawData: { docId: d.id, ...t },
          });
      return { items, next: docs.nextPageToken ?? null };
    },
    async listRows(call, a) {
      const b = (
        await call({
          method: 'GET',
          path: rowsPath(a.tableId),
          query: { useColumnNames: true, valueFormat: 'simple', limit: a.limit, pageToken: a.cursor },
        })
      ).json<List<CRow>>();
      return {
        items: b.items.map(
          (r): Row => ({
            id: r.id,
            tableId: a.tableId,
            fields: r.values,
            createdAt: iso(r.createdAt),
            rawData: r as unknown as Record<string, unknown>,
          }),
        ),
        next: b.nextPageToken ?? null,
      };
    },
    async createRow(call, input) {
      const cells = Object.entries(input.fields).map(([column, value]) => ({ column, value }));
      const res = await call({ method: 'POST', path: rowsPath(input.tableId), json: { rows: [{ cells }] } });
      const id = res.json<{ addedRowIds?: string[] }>().addedRowIds?.[0] ?? '';
      // The insert is queued at Coda: the row is answered as sent, with the id Coda gave it.
      return { id, tableId: input.tableId, fields: input.fields, createdAt: null, rawData: res.json() };
    },
  },
};
