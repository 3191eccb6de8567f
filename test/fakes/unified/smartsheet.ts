import type { UnifiedCase } from '../../unified-scenarios.ts';
import { bearer, nextId, nowIso, startKitFake } from './kit.ts';

// Smartsheet 2.0 as its reference describes it (https://smartsheet.redoc.ly/): GET /2.0/sheets with
// page/pageSize (`{ pageNumber, pageSize, totalPages, totalCount, data }`), GET /2.0/sheets/{id} with its
// columns and a page of rows (`totalRowCount`), GET /2.0/sheets/{id}/columns (`{ data }`), POST
// /2.0/sheets/{id}/rows with an array of rows of `{ columnId, value }` cells (errorCode 1036 for an unknown
// column). Bearer tokens; errors `{ errorCode, message, refId }`.

type Column = { id: number; index: number; title: string; type: string; primary?: boolean };
type Row = {
  id: number;
  rowNumber: number;
  cells: { columnId: number; value?: unknown; displayValue?: string }[];
  createdAt: string;
  modifiedAt: string;
};
type Sheet = {
  id: number;
  name: string;
  permalink: string;
  createdAt: string;
  modifiedAt: string;
  columns: Column[];
  rows: Row[];
};
const ssError = (status: number, errorCode: number, message: string) => ({
  status,
  json: { errorCode, message, refId: 'ref1' },
});

export function smartsheetFake() {
  const store = { sheets: [] as Sheet[] };
  const find = (id: string) => store.sheets.find((s) => String(s.id) === id);
  const missing = ssError(404, 1006, 'Not Found');
  return startKitFake({
    store,
    authorized: bearer,
    unauthorized: ssError(401, 1002, 'Your Access Token is invalid.'),
    notFound: () => missing,
    routes: [
      [
        'GET',
        /^\/2\.0\/sheets$/,
        (r) => {
          const page = Number(r.url.searchParams.get('page') ?? 1);
          const size = Number(r.url.searchParams.get('pageSize') ?? 100);
          const all = store.sheets.map(({ columns: _c, rows: _r, ...s }) => s);
          return {
            json: {
              pageNumber: page,
              pageSize: size,
              totalPages: Math.ceil(all.length / size),
              totalCount: all.length,
              data: all.slice((page - 1) * size, page * size),
            },
          };
        },
      ],
      [
        'GET',
        /^\/2\.0\/sheets\/(\d+)$/,
        (r, m) => {
          const s = find(m[1]!);
          if (!s) return missing;
          const page = Number(r.url.searchParams.get('page') ?? 1);
          const size = Number(r.url.searchParams.get('pageSize') ?? 500);
          return {
            json: { ...s, totalRowCount: s.rows.length, rows: s.rows.slice((page - 1) * size, page * size) },
          };
        },
      ],
      [
        'GET',
        /^\/2\.0\/sheets\/(\d+)\/columns$/,
        (_r, m) => {
          const s = find(m[1]!);
          return s
            ? { json: { pageNumber: 1, totalPages: 1, totalCount: s.columns.length, data: s.columns } }
            : missing;
        },
      ],
      [
        'POST',
        /^\/2\.0\/sheets\/(\d+)\/rows$/,
        (r, m) => {
          const s = find(m[1]!);
          if (!s) return missing;
          const added: Row[] = [];
          for (const input of r.json<unknown>() as { cells: { columnId: number; value: unknown }[] }[]) {
            for (const c of input.cells)
              if (!s.columns.some((x) => x.id === c.columnId))
                return ssError(400, 1036, `Column ${c.columnId} not found`);
            const row: Row = {
              id: Number(`77${nextId()}`),
              rowNumber: s.rows.length + 1,
              cells: input.cells.map((c) => ({ ...c, displayValue: String(c.value) })),
              createdAt: nowIso(),
              modifiedAt: nowIso(),
            };
            s.rows.push(row);
            added.push(row);
          }
          return { json: { message: 'SUCCESS', resultCode: 0, version: 2, result: added } };
        },
      ],
    ],
  });
}

export const smartsheetCase: UnifiedCase = {
  slug: 'smartsheet',
  category: 'productivity',
  start: smartsheetFake,
  env: (url) => ({ INTEGRATIONS_SMARTSHEET_API_URL: `${url}/2.0` }),
  without: ['documents'],
  seed(s) {
    const store = s as { sheets: Sheet[] };
    const columns: Column[] = [
      { id: 101, index: 0, title: 'Name', type: 'TEXT_NUMBER', primary: true },
      { id: 102, index: 1, title: 'Status', type: 'PICKLIST' },
    ];
    const rows: Row[] = [1, 2, 3].map((i) => ({
      id: 5000 + i,
      rowNumber: i,
      cells: [
        { columnId: 101, value: `Task ${i}`, displayValue: `Task ${i}` },
        { columnId: 102, value: 'Done', displayValue: 'Done' },
      ],
      createdAt: nowIso(),
      modifiedAt: nowIso(),
    }));
    store.sheets.push({
      id: 4583173393803140,
      name: 'Roadmap',
      permalink: 'https://app.smartsheet.com/sheets/x',
      createdAt: nowIso(),
      modifiedAt: nowIso(),
      columns,
      rows,
    });
  },
};
