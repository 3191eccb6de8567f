import type { UnifiedCase } from '../../unified-scenarios.ts';
import { bearer, nextId, nowIso, type Req, startKitFake } from './kit.ts';

// Zendesk Sell Core API v2 as its reference describes it: /v2/contacts (people and organizations, filtered by
// `is_organization`) and /v2/deals, paged by page/per_page with `meta.links.next_page`; items wrapped as
// `{ data, meta: { type } }`; writes `{ data }`; DELETE 204; a person needs last_name, an organization a name,
// a deal a contact_id (422 otherwise). Bearer tokens.

type Z = Record<string, unknown> & { id: number };
const sellError = (status: number, code: string, message: string) => ({
  status,
  json: { errors: [{ error: { code, message, details: message } }], meta: { type: 'errors' } },
});

export function zendeskSellFake() {
  const store = { contacts: [] as Z[], deals: [] as Z[] };
  const missing = sellError(404, 'not_found', 'The requested resource was not found');
  const listOf = (r: Req, all: Z[], type: string) => {
    const page = Number(r.url.searchParams.get('page') ?? 1);
    const per = Number(r.url.searchParams.get('per_page') ?? 25);
    const slice = all.slice((page - 1) * per, page * per);
    const next =
      page * per < all.length ? `${r.origin}${r.path}?page=${page + 1}&per_page=${per}` : undefined;
    return {
      json: {
        items: slice.map((data) => ({ data, meta: { version: 1, type } })),
        meta: {
          type: 'collection',
          count: slice.length,
          links: { self: `${r.origin}${r.path}`, ...(next ? { next_page: next } : {}) },
        },
      },
    };
  };
  const find = (id: string) => store.contacts.find((c) => String(c.id) === id);
  return startKitFake({
    store,
    authorized: bearer,
    unauthorized: sellError(401, 'unauthorized', 'Invalid token'),
    notFound: () => missing,
    routes: [
      [
        'GET',
        /^\/v2\/contacts$/,
        (r) => {
          const org = r.url.searchParams.get('is_organization');
          return listOf(
            r,
            store.contacts.filter((c) => org === null || String(c.is_organization) === org),
            'contact',
          );
        },
      ],
      [
        'POST',
        /^\/v2\/contacts$/,
        (r) => {
          const d = r.json<{ data: Record<string, unknown> }>().data;
          if (d.is_organization ? !d.name : !d.last_name)
            return sellError(
              422,
              'blank',
              d.is_organization ? 'name can not be blank' : 'last_name can not be blank',
            );
          const rec: Z = { ...d, id: Number(nextId()), created_at: nowIso(), updated_at: nowIso() };
          store.contacts.push(rec);
          return { json: { data: rec, meta: { type: 'contact' } } };
        },
      ],
      [
        'GET',
        /^\/v2\/contacts\/(\d+)$/,
        (_r, m) => {
          const c = find(m[1]!);
          return c ? { json: { data: c, meta: { type: 'contact' } } } : missing;
        },
      ],
      [
        'PUT',
        /^\/v2\/contacts\/(\d+)$/,
        (r, m) => {
          const c = find(m[1]!);
          if (!c) return missing;
          Object.assign(c, r.json<{ data: Record<string, unknown> }>().data, { updated_at: nowIso() });
          return { json: { data: c, meta: { type: 'contact' } } };
        },
      ],
      [
        'DELETE',
        /^\/v2\/contacts\/(\d+)$/,
        (_r, m) => {
          const c = find(m[1]!);
          if (!c) return missing;
          store.contacts.splice(store.contacts.indexOf(c), 1);
          return { status: 204 };
        },
      ],
      ['GET', /^\/v2\/deals$/, (r) => listOf(r, store.deals, 'deal')],
      [
        'POST',
        /^\/v2\/deals$/,
        (r) => {
          const d = r.json<{ data: Record<string, unknown> }>().data;
          if (!d.contact_id) return sellError(422, 'blank', 'contact_id can not be blank');
          const rec: Z = { ...d, id: Number(nextId()), created_at: nowIso(), updated_at: nowIso() };
          store.deals.push(rec);
          return { json: { data: rec, meta: { type: 'deal' } } };
        },
      ],
    ],
  });
}

export const zendeskSellCase: UnifiedCase = {
  slug: 'zendesk-sell',
  category: 'crm',
  start: zendeskSellFake,
  env: (url) => ({ INTEGRATIONS_ZENDESK_SELL_API_URL: `${url}/v2` }),
  without: ['createDeal'],
  seed(s) {
    const store = s as { deals: Z[] };
    // Sell answers deal values as decimal strings.
    store.deals.push(
      {
        id: 91,
        name: 'Big deal',
        value: '1200.00',
        currency: 'USD',
        stage_id: 3,
        contact_id: 1,
        created_at: nowIso(),
        updated_at: nowIso(),
      },
      {
        id: 92,
        name: 'Renewal',
        value: 300,
        currency: 'USD',
        stage_id: 4,
        contact_id: 1,
        created_at: nowIso(),
        updated_at: nowIso(),
      },
      {
        id: 93,
        name: 'Upsell',
        value: '50.5',
        currency: 'USD',
        stage_id: 4,
        contact_id: 1,
        created_at: nowIso(),
        updated_at: nowIso(),
      },
    );
  },
};
