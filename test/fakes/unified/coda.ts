import type { UnifiedCase } from '../../unified-scenarios.ts';
import { bearer, nextId, nowIso, type Req, startKitFake } from './kit.ts';

// Coda v1 as its reference describes it (https://coda.io/developers/apis/v1): GET /apis/v1/docs and
// /docs/{doc}/tables and /docs/{doc}/tables/{table}/rows paged by `limit` + `pageToken` (answering
// `{ items, href, nextPageToken }`); POST /docs {title} answers 202 with the doc; POST …/rows {rows: [{cells:
// [{column, value}]}]} answers 202 `{ requestId, addedRowIds }`; rows with useColumnNames=true key their
// values by column name. Bearer API tokens; errors `{ statusCode, statusMessage, message }`.

type Doc = {
  id: string;
  type: 'doc';
  name: string;
  browserLink: string;
  createdAt: string;
  updatedAt: string;
};
type Table = {
  id: string;
  type: 'table';
  tableType: 'table';
  name: string;
  createdAt: string;
  columns: { id: string; name: string }[];
  rows: { id: string; type: 'row'; index: number; values: Record<string, unknown>; createdAt: string }[];
};
const codaError = (statusCode: number, statusMessage: string, message: string) => ({
  status: statusCode,
  json: { statusCode, statusMessage, message },
});

function paged<T>(r: Req, all: T[]) {
  const limit = Number(r.url.searchParams.get('limit') ?? 25);
  const from = Number(r.url.searchParams.get('pageToken') ?? 0);
  const next = from + limit < all.length ? String(from + limit) : undefined;
  return {
    json: {
      items: all.slice(from, from + limit),
      href: `${r.origin}${r.path}`,
      ...(next ? { nextPageToken: next, nextPageLink: `${r.origin}${r.path}?pageToken=${next}` } : {}),
    },
  };
}

export function codaFake() {
  const store = { docs: [] as Doc[], tables: new Map<string, Table[]>() };
  const missing = codaError(404, 'Not Found', 'The resource could not be located.');
  const table = (d: string, t: string) => store.tables.get(d)?.find((x) => x.id === t);
  return startKitFake({
    store,
    authorized: bearer,
    unauthorized: codaError(401, 'Unauthorized', 'The API token is invalid or has expired.'),
    notFound: () => missing,
    routes: [
      ['GET', /^\/apis\/v1\/docs$/, (r) => paged(r, store.docs)],
      [
        'POST',
        /^\/apis\/v1\/docs$/,
        (r) => {
          const id = `d${nextId()}`;
          const d: Doc = {
            id,
            type: 'doc',
            name: r.json<{ title?: string }>().title ?? 'Untitled',
            browserLink: `https://coda.io/d/_d${id}`,
            createdAt: nowIso(),
            updatedAt: nowIso(),
          };
          store.docs.push(d);
          return { status: 202, json: d };
        },
      ],
      [
        'GET',
        /^\/apis\/v1\/docs\/([\w-]+)\/tables$/,
        (r, m) =>
          paged(
            r,
            (store.tables.get(m[1]!) ?? []).map(({ columns: _c, rows: _r, ...t }) => t),
          ),
      ],
      [
        'GET',
        /^\/apis\/v1\/docs\/([\w-]+)\/tables\/([\w-]+)\/rows$/,
        (r, m) => {
          const t = table(m[1]!, m[2]!);
          if (!t) return missing;
          const byName = r.url.searchParams.get('useColumnNames') === 'true';
          const name = new Map(t.columns.map((c) => [c.id, c.name]));
          return paged(
            r,
            t.rows.map((row) => ({
              ...row,
              values: byName
                ? Object.fromEntries(Object.entries(row.values).map(([k, v]) => [name.get(k) ?? k, v]))
                : row.values,
            })),
          );
        },
      ],
      [
        'POST',
        /^\/apis\/v1\/docs\/([\w-]+)\/tables\/([\w-]+)\/rows$/,
        (r, m) => {
          const t = table(m[1]!, m[2]!);
          if (!t) return missing;
          const ids: string[] = [];
          for (const row of r.json<{ rows: { cells: { column: string; value: unknown }[] }[] }>().rows) {
            const values: Record<string, unknown> = {};
            for (const c of row.cells) {
              const col = t.columns.find((x) => x.id === c.column || x.name === c.column);
              if (!col) return codaError(400, 'Bad Request', `Column ${c.column} not found`);
              values[col.id] = c.value;
            }
            const id = `i-${nextId()}`;
            t.rows.push({ id, type: 'row', index: t.rows.length, values, createdAt: nowIso() });
            ids.push(id);
          }
          return { status: 202, json: { requestId: `mutate:${nextId()}`, addedRowIds: ids } };
        },
      ],
    ],
  });
}

export const codaCase: UnifiedCase = {
  slug: 'coda',
  category: 'productivity',
  start: codaFake,
  env: (url) => ({ INTEGRATIONS_CODA_API_URL: `${url}/apis/v1` }),
  seed(s) {
    const store = s as { docs: Doc[]; tables: Map<string, Table[]> };
    store.docs.push({
      id: 'dRoadmap',
      type: 'doc',
      name: 'Roadmap',
      browserLink: 'https://coda.io/d/_dRoadmap',
      createdAt: nowIso(),
      updatedAt: nowIso(),
    });
    store.tables.set('dRoadmap', [
      {
        id: 'grid-tasks',
        type: 'table',
        tableType: 'table',
        name: 'Tasks',
        createdAt: nowIso(),
        columns: [
          { id: 'c-name', name: 'Name' },
          { id: 'c-status', name: 'Status' },
        ],
        rows: [1, 2, 3].map((i) => ({
          id: `i-seed${i}`,
          type: 'row' as const,
          index: i,
          values: { 'c-name': `Task ${i}`, 'c-status': 'Done' },
          createdAt: nowIso(),
        })),
      },
    ]);
  },
};
