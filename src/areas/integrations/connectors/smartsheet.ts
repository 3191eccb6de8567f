import { integrationsErrors } from '../errors.ts';
import type { ConnectorCode, ProviderCall, Row, Table } from './types.ts';
import { iso, messageAt } from './types.ts';

// Smartsheet API 2.0 (https://smartsheet.redoc.ly/): sheets are tables. GET /sheets pages with
// `page`/`pageSize` (`totalPages`); a sheet's rows come with GET /sheets/{id} (also `page`/`pageSize`,
// `totalRowCount`), each row a list of `cells` keyed by `columnId`, named by the sheet's `columns` (`title`).
// Rows are added with POST /sheets/{id}/rows `[ { toBottom, cells: [ { columnId, value } ] } ]`, answering
// `{ message: 'SUCCESS', result: [row] }`. Smartsheet has no documents. Errors: `{ errorCode, message }`.

type Column = { id: number; title: string; primary?: boolean };
type Cell = { columnId: number; value?: unknown; displayValue?: string };
type SRow = { id: number; rowNumber?: number; cells: Cell[]; createdAt?: string; modifiedAt?: string };
type Sheet = { id: number; name: string; columns?: Column[]; rows?: SRow[]; totalRowCount?: number };

const noDocuments = () => integrationsErrors.operationNotSupported('smartsheet', 'documents');

function row(tableId: string, columns: Column[], r: SRow): Row {
  const title = new Map(columns.map((c) => [c.id, c.title]));
  const fields: Record<string, unknown> = {};
  for (const c of r.cells)
    if (c.value !== undefined) fields[title.get(c.columnId) ?? String(c.columnId)] = c.value;
  return {
    id: String(r.id),
    tableId,
    fields,
    createdAt: iso(r.createdAt),
    rawData: r as unknown as Record<string, unknown>,
  };
}

const sheetPath = (id: string) => {
  if (!/^\d+$/.test(id)) throw integrationsErrors.providerResourceNotFound('smartsheet', `no sheet ${id}`);
  return `/sheets/${id}`;
};

async function columns(call: ProviderCall, id: string): Promise<Column[]> {
  return (await call({ method: 'GET', path: `${sheetPath(id)}/columns`, query: { includeAll: true } })).json<{
    data: Column[];
  }>().data;
}

export const smartsheet: ConnectorCode = {
  features: ['tables', 'rows'],
  errorMessage: (res) => messageAt(res, 'message'),
  productivity: {
    listDocuments: async () => {
      throw noDocuments();
    },
    createDocument: async () => {
      throw noDocuments();
    },
    async listTables(call, a) {
      const page = Number(a.cursor ?? 1);
      const b = (await call({ method: 'GET', path: '/sheets', query: { page, pageSize: a.limit } })).json<{
        data: (Sheet & { createdAt?: string })[];
        totalPages: number;
      }>();
      return {
        items: b.data.map(
          (s): Table => ({
            id: String(s.id),
            name: s.name,
            createdAt: iso(s.createdAt),
            rawData: s as unknown as Record<string, unknown>,
          }),
        ),
        next: page < b.totalPages ? String(page + 1) : null,
      };
    },
    async listRows(call, a) {
      const page = Number(a.cursor ?? 1);
      const s = (
        await call({ method: 'GET', path: sheetPath(a.tableId), query: { page, pageSize: a.limit } })
      ).json<Sheet>();
      const rows = s.rows ?? [];
      const more = page * a.limit < (s.totalRowCount ?? 0);
      return {
        items: rows.map((r) => row(a.tableId, s.columns ?? [], r)),
        next: more ? String(page + 1) : null,
      };
    },
    async createRow(call, input) {
      const cols = await columns(call, input.tableId);
      const byTitle = new Map(cols.map((c) => [c.title, c.id]));
      const cells = Object.entries(input.fields).map(([k, value]) => {
        const columnId = byTitle.get(k);
        if (columnId === undefined)
          throw integrationsErrors.providerRejected('smartsheet', 400, `the sheet has no column '${k}'`);
        return { columnId, value };
      });
      const res = await call({
        method: 'POST',
        path: `${sheetPath(input.tableId)}/rows`,
        json: [{ toBottom: true, cells }],
      });
      return row(input.tableId, cols, res.json<{ result: SRow[] }>().result[0]!);
    },
  },
};
