import { errors } from '../../../core/errors.ts';
import {
  type ConnectorCode,
  type Document,
  iso,
  messageAt,
  type ProviderCall,
  type Row,
  str,
  type Table,
} from './types.ts';

// Notion API 2022-06-28 (https://developers.notion.com/reference): pages are documents, databases are
// tables and their pages are rows. Lists are POST /search or /databases/{id}/query with `start_cursor` /
// `page_size`, answering `{ results, next_cursor, has_more }`. OAuth: Basic client auth and a JSON token
// body; the token answer names the workspace. Errors: `{ object: 'error', status, code, message }`.

type NPage = {
  id: string;
  object: string;
  url?: string;
  created_time?: string;
  last_edited_time?: string;
  parent?: { database_id?: string };
  properties?: Record<string, NProp>;
  title?: { plain_text?: string }[];
};
type NProp = { type: string; [k: string]: unknown };
type NList = { results: NPage[]; next_cursor: string | null; has_more: boolean };

const plain = (rich: unknown): string | null => {
  if (!Array.isArray(rich)) return null;
  const s = rich
    .map(
      (t) =>
        (t as { plain_text?: string }).plain_text ??
        (t as { text?: { content?: string } }).text?.content ??
        '',
    )
    .join('');
  return s || null;
};

function pageTitle(p: NPage): string | null {
  for (const prop of Object.values(p.properties ?? {})) if (prop.type === 'title') return plain(prop.title);
  return plain(p.title);
}

/** A property's value as a plain JSON value (the unified row's `fields`). */
function plainValue(prop: NProp): unknown {
  const v = prop[prop.type];
  switch (prop.type) {
    case 'title':
    case 'rich_text':
      return plain(v);
    case 'select':
    case 'status':
      return (v as { name?: string } | null)?.name ?? null;
    case 'multi_select':
      return Array.isArray(v) ? v.map((o: { name?: string }) => o.name) : [];
    case 'date':
      return (v as { start?: string } | null)?.start ?? null;
    default:
      return v ?? null;
  }
}

/** A plain value in the shape the database's property type takes. */
function propertyValue(type: string, value: unknown): unknown {
  const text = (s: unknown) => [{ type: 'text', text: { content: String(s ?? '') } }];
  switch (type) {
    case 'title':
      return { title: text(value) };
    case 'rich_text':
      return { rich_text: text(value) };
    case 'number':
      return { number: value === null ? null : Number(value) };
    case 'checkbox':
      return { checkbox: Boolean(value) };
    case 'select':
      return { select: value === null ? null : { name: String(value) } };
    case 'status':
      return { status: { name: String(value) } };
    case 'multi_select':
      return { multi_select: (Array.isArray(value) ? value : [value]).map((n) => ({ name: String(n) })) };
    case 'date':
      return { date: value === null ? null : { start: String(value) } };
    case 'url':
    case 'email':
    case 'phone_number':
      return { [type]: value === null ? null : String(value) };
    default:
      // Other types (relation, people, files…) are taken in Notion's own shape.
      return value;
  }
}

const document = (p: NPage): Document => ({
  id: p.id,
  title: pageTitle(p),
  url: str(p.url),
  createdAt: iso(p.created_time),
  updatedAt: iso(p.last_edited_time),
  rawData: p as unknown as Record<string, unknown>,
});

const table = (p: NPage): Table => ({
  id: p.id,
  name: plain(p.title),
  createdAt: iso(p.created_time),
  rawData: p as unknown as Record<string, unknown>,
});

const row = (tableId: string, p: NPage): Row => ({
  id: p.id,
  tableId,
  fields: Object.fromEntries(Object.entries(p.properties ?? {}).map(([k, v]) => [k, plainValue(v)])),
  createdAt: iso(p.created_time),
  rawData: p as unknown as Record<string, unknown>,
});

async function search(call: ProviderCall, value: 'page' | 'database', a: { cursor?: string; limit: number }) {
  const res = await call({
    method: 'POST',
    path: '/search',
    json: {
      filter: { property: 'object', value },
      page_size: a.limit,
      ...(a.cursor ? { start_cursor: a.cursor } : {}),
    },
  });
  return res.json<NList>();
}

const nextOf = (b: NList) => (b.has_more ? b.next_cursor : null);

export const notion: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'message', 'error_description', 'error'),
  async account(call, tokens) {
    const ws = tokens.extra as { workspace_id?: string; workspace_name?: string } | undefined;
    if (ws?.workspace_id) return { id: ws.workspace_id, name: ws.workspace_name ?? null };
    const me = (await call({ method: 'GET', path: '/users/me' })).json<{
      id: string;
      name?: string;
      bot?: { workspace_name?: string };
    }>();
    return { id: me.id, name: me.bot?.workspace_name ?? me.name ?? null };
  },
  productivity: {
    async listDocuments(call, a) {
      const b = await search(call, 'page', a);
      return { items: b.results.map(document), next: nextOf(b) };
    },
    async createDocument(call, input) {
      const children = input.content
        ? input.content.split(/\n{2,}/).map((para) => ({
            object: 'block',
            type: 'paragraph',
            paragraph: { rich_text: [{ type: 'text', text: { content: para.slice(0, 2000) } }] },
          }))
        : [];
      const res = await call({
        method: 'POST',
        path: '/pages',
        json: {
          parent: input.parentId
            ? { type: 'page_id', page_id: input.parentId }
            : { type: 'workspace', workspace: true },
          properties: { title: { title: [{ type: 'text', text: { content: input.title } }] } },
          children,
        },
      });
      return document(res.json<NPage>());
    },
    async listTables(call, a) {
      const b = await search(call, 'database', a);
      return { items: b.results.map(table), next: nextOf(b) };
    },
    async listRows(call, a) {
      const res = await call({
        method: 'POST',
        path: `/databases/${encodeURIComponent(a.tableId)}/query`,
        json: { page_size: a.limit, ...(a.cursor ? { start_cursor: a.cursor } : {}) },
      });
      const b = res.json<NList>();
      return { items: b.results.map((p) => row(a.tableId, p)), next: nextOf(b) };
    },
    async createRow(call, input) {
      // Plain values need the column types: read the database's schema first.
      const db = (
        await call({ method: 'GET', path: `/databases/${encodeURIComponent(input.tableId)}` })
      ).json<{
        properties: Record<string, { type: string }>;
      }>();
      const properties: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(input.fields)) {
        const col = db.properties[name];
        if (!col) throw errors.validation(`The table has no column named '${name}'.`);
        properties[name] = propertyValue(col.type, value);
      }
      const res = await call({
        method: 'POST',
        path: '/pages',
        json: { parent: { database_id: input.tableId }, properties },
      });
      return row(input.tableId, res.json<NPage>());
    },
  },
};
