import { errors } from '../../../core/errors.ts';
import { integrationsErrors } from '../errors.ts';
import { type ConnectorCode, iso, type ProviderResponse, type Row, type Table } from './types.ts';

// Airtable Web API (https://airtable.com/developers/web/api): records under /v0/{baseId}/{tableId} paged by
// `offset`; the schema under /v0/meta/bases (offset-paged) and /v0/meta/bases/{baseId}/tables. A unified
// table id is `<baseId>:<tableId>` since Airtable tables live in bases. OAuth requires PKCE; confidential
// clients authenticate with HTTP Basic. Airtable has no documents. Errors: `{ error: { type, message } }`
// or `{ error: 'NOT_FOUND' }`.

type Base = { id: string; name: string };
type ATable = { id: string; name: string; primaryFieldId?: string };
type ARecord = { id: string; createdTime?: string; fields: Record<string, unknown> };

function splitTable(id: string): { base: string; table: string } {
  const m = id.match(/^(app[A-Za-z0-9]+):(tbl[A-Za-z0-9]+|[^:/]+)$/);
  if (!m)
    throw errors.validation(
      "Airtable table ids look like '<baseId>:<tableId>' (as listed by /productivity/tables).",
    );
  return { base: m[1]!, table: m[2]! };
}

const row = (tableId: string, r: ARecord): Row => ({
  id: r.id,
  tableId,
  fields: r.fields ?? {},
  createdAt: iso(r.createdTime),
  rawData: r as unknown as Record<string, unknown>,
});

function errorMessage(res: ProviderResponse): string | null {
  try {
    const e = res.json<{ error?: string | { type?: string; message?: string } }>().error;
    if (typeof e === 'string') return e;
    return e ? [e.type, e.message].filter(Boolean).join(': ') : null;
  } catch {
    return null;
  }
}

const noDocuments = () => integrationsErrors.operationNotSupported('airtable', 'documents');

export const airtable: ConnectorCode = {
  // No documents: Airtable has bases, tables and records only.
  features: ['tables', 'rows'],
  errorMessage,
  async account(call) {
    const b = (await call({ method: 'GET', path: '/meta/whoami' })).json<{ id: string; email?: string }>();
    return { id: b.id, name: b.email ?? null };
  },
  productivity: {
    listDocuments: async () => {
      throw noDocuments();
    },
    createDocument: async () => {
      throw noDocuments();
    },
    async listTables(call, a) {
      // One page of bases, with every table of each: the cursor is the bases' offset.
      const b = (await call({ method: 'GET', path: '/meta/bases', query: { offset: a.cursor } })).json<{
        bases: Base[];
        offset?: string;
      }>();
      const items: Table[] = [];
      for (const base of b.bases) {
        const t = (
          await call({ method: 'GET', path: `/meta/bases/${encodeURIComponent(base.id)}/tables` })
        ).json<{ tables: ATable[] }>();
        for (const tbl of t.tables)
          items.push({
            id: `${base.id}:${tbl.id}`,
            name: `${base.name} / ${tbl.name}`,
            createdAt: null,
            rawData: { base, table: tbl },
          });
      }
      return { items, next: b.offset ?? null };
    },
    async listRows(call, a) {
      const { base, table } = splitTable(a.tableId);
      const b = (
        await call({
          method: 'GET',
          path: `/${encodeURIComponent(base)}/${encodeURIComponent(table)}`,
          query: { pageSize: Math.min(a.limit, 100), offset: a.cursor },
        })
      ).json<{ records: ARecord[]; offset?: string }>();
      return { items: b.records.map((r) => row(a.tableId, r)), next: b.offset ?? null };
    },
    async createRow(call, input) {
      const { base, table } = splitTable(input.tableId);
      const res = await call({
        method: 'POST',
        path: `/${encodeURIComponent(base)}/${encodeURIComponent(table)}`,
        // typecast: plain values are converted to the column's type (select options, numbers in strings).
        json: { fields: input.fields, typecast: true },
      });
      return row(input.tableId, res.json<ARecord>());
    },
  },
};
