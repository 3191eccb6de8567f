import type { UnifiedCase } from '../../unified-scenarios.ts';
import { nextId, nowIso, SECRET, startKitFake } from './kit.ts';

// Freshsales (Freshworks CRM) as its reference describes it: /crm/sales/api/{contacts,sales_accounts,deals};
// GET …/filters lists the views, GET …/view/{id} pages with page/per_page answering `{ <plural>: [...], meta:
// { total_pages, total } }`; records wrapped in their singular name both ways; DELETE answers `true`; deal
// amounts are decimal strings. `Authorization: Token token=<key>`; a wrong key is 401 `{ login: 'failed' }`.

type F = Record<string, unknown> & { id: number };
const OBJ: Record<string, { singular: string; all: string; view: number; need: string }> = {
  contacts: { singular: 'contact', all: 'All Contacts', view: 11, need: 'email' },
  sales_accounts: { singular: 'sales_account', all: 'All Accounts', view: 22, need: 'name' },
  deals: { singular: 'deal', all: 'All Deals', view: 33, need: 'name' },
};
const fsError = (status: number, message: string) => ({
  status,
  json: { errors: { code: status, message: [message] } },
});

export function freshsalesFake() {
  const store: Record<string, F[]> = { contacts: [], sales_accounts: [], deals: [] };
  const missing = fsError(404, 'Record not found');
  const find = (o: string, id: string) => store[o]!.find((x) => String(x.id) === id);
  const wrap = (o: string, f: F) => ({ [OBJ[o]!.singular]: f });
  return startKitFake({
    store,
    authorized: (r) => r.headers.authorization === `Token token=${SECRET}`,
    unauthorized: { status: 401, json: { login: 'failed', message: 'Incorrect or expired API key' } },
    notFound: () => missing,
    routes: [
      [
        'GET',
        /^\/crm\/sales\/api\/(contacts|sales_accounts|deals)\/filters$/,
        (_r, m) => ({
          json: {
            filters: [
              { id: OBJ[m[1]!]!.view - 1, name: 'My items', is_default: false },
              { id: OBJ[m[1]!]!.view, name: OBJ[m[1]!]!.all, is_default: true },
            ],
          },
        }),
      ],
      [
        'GET',
        /^\/crm\/sales\/api\/(contacts|sales_accounts|deals)\/view\/(\d+)$/,
        (r, m) => {
          const o = m[1]!;
          if (Number(m[2]) !== OBJ[o]!.view) return { json: { [o]: [], meta: { total_pages: 1, total: 0 } } };
          const page = Number(r.url.searchParams.get('page') ?? 1);
          const per = Number(r.url.searchParams.get('per_page') ?? 25);
          const all = store[o]!;
          return {
            json: {
              [o]: all.slice((page - 1) * per, page * per),
              meta: { total_pages: Math.max(1, Math.ceil(all.length / per)), total: all.length },
            },
          };
        },
      ],
      [
        'POST',
        /^\/crm\/sales\/api\/(contacts|sales_accounts|deals)$/,
        (r, m) => {
          const o = m[1]!;
          const body = r.json<Record<string, Record<string, unknown>>>()[OBJ[o]!.singular];
          if (!body?.[OBJ[o]!.need]) return fsError(400, `${OBJ[o]!.need} is required`);
          const f: F = { ...body, id: Number(`16${nextId()}`), created_at: nowIso(), updated_at: nowIso() };
          if (o === 'deals' && body.amount !== undefined) f.amount = Number(body.amount).toFixed(2);
          store[o]!.push(f);
          return { json: wrap(o, f) };
        },
      ],
      [
        'GET',
        /^\/crm\/sales\/api\/(contacts|sales_accounts|deals)\/(\d+)$/,
        (_r, m) => {
          const f = find(m[1]!, m[2]!);
          return f ? { json: wrap(m[1]!, f) } : missing;
        },
      ],
      [
        'PUT',
        /^\/crm\/sales\/api\/(contacts|sales_accounts|deals)\/(\d+)$/,
        (r, m) => {
          const f = find(m[1]!, m[2]!);
          if (!f) return missing;
          Object.assign(f, r.json<Record<string, object>>()[OBJ[m[1]!]!.singular], { updated_at: nowIso() });
          return { json: wrap(m[1]!, f) };
        },
      ],
      [
        'DELETE',
        /^\/crm\/sales\/api\/(contacts|sales_accounts|deals)\/(\d+)$/,
        (_r, m) => {
          const f = find(m[1]!, m[2]!);
          if (!f) return missing;
          store[m[1]!]!.splice(store[m[1]!]!.indexOf(f), 1);
          return { json: true };
        },
      ],
    ],
  });
}

export const freshsalesCase: UnifiedCase = {
  slug: 'freshsales',
  category: 'crm',
  start: freshsalesFake,
  env: (url) => ({ INTEGRATIONS_FRESHSALES_API_URL: `${url}/crm/sales/api` }),
};
