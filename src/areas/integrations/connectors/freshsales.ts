import type { Company, ConnectorCode, Contact, ContactInput, Deal, Page, ProviderCall } from './types.ts';
import { iso, messageAt, str } from './types.ts';

// Freshsales (Freshworks CRM) API (https://developers.freshworks.com/crm/api/): contacts, sales accounts
// (companies) and deals under https://<domain>.myfreshworks.com/crm/sales/api. Lists go through a view: GET
// /<object>/filters names the views, and GET /<object>/view/<id> pages with `page`/`per_page` and
// `meta.total_pages`; the "All …" view is the unified list. Records are wrapped in their singular name
// (`{ contact: {...} }`) both ways. The key goes as `Authorization: Token token=…`. Errors:
// `{ errors: { code, message: [...] } }` or `{ login: 'failed', message }`.

type F = Record<string, unknown> & { id: number };
type Obj = { plural: 'contacts' | 'sales_accounts' | 'deals'; singular: string; all: string };
const CONTACTS: Obj = { plural: 'contacts', singular: 'contact', all: 'All Contacts' };
const ACCOUNTS: Obj = { plural: 'sales_accounts', singular: 'sales_account', all: 'All Accounts' };
const DEALS: Obj = { plural: 'deals', singular: 'deal', all: 'All Deals' };

const contact = (f: F): Contact => ({
  id: String(f.id),
  firstName: str(f.first_name),
  lastName: str(f.last_name),
  email: str(f.email),
  phone: str(f.mobile_number) ?? str(f.work_number),
  title: str(f.job_title),
  companyId:
    f.sales_account_id === null || f.sales_account_id === undefined ? null : String(f.sales_account_id),
  createdAt: iso(f.created_at),
  updatedAt: iso(f.updated_at),
  rawData: f,
});
const company = (f: F): Company => ({
  id: String(f.id),
  name: str(f.name),
  domain: str(f.website),
  industry: null,
  createdAt: iso(f.created_at),
  updatedAt: iso(f.updated_at),
  rawData: f,
});
const deal = (f: F): Deal => {
  const v = typeof f.amount === 'string' ? Number(f.amount) : f.amount;
  return {
    id: String(f.id),
    name: str(f.name),
    amount: typeof v === 'number' && Number.isFinite(v) ? v : null,
    stage: f.deal_stage_id === undefined || f.deal_stage_id === null ? null : String(f.deal_stage_id),
    createdAt: iso(f.created_at),
    updatedAt: iso(f.updated_at),
    rawData: f,
  };
};

async function allView(call: ProviderCall, o: Obj): Promise<number> {
  const b = (await call({ method: 'GET', path: `/${o.plural}/filters` })).json<{
    filters: { id: number; name: string }[];
  }>();
  const v = b.filters.find((f) => f.name === o.all) ?? b.filters[0];
  if (!v) throw new Error(`Freshsales answered no ${o.plural} views`);
  return v.id;
}

async function list<T>(
  call: ProviderCall,
  o: Obj,
  a: { cursor?: string; limit: number },
  map: (f: F) => T,
): Promise<Page<T>> {
  // The cursor carries the view with the page, so later pages skip the views lookup.
  const [view, page] = a.cursor
    ? (a.cursor.split(':').map(Number) as [number, number])
    : [await allView(call, o), 1];
  const b = (
    await call({
      method: 'GET',
      path: `/${o.plural}/view/${view}`,
      query: { page, per_page: a.limit, sort: 'id', sort_type: 'asc' },
    })
  ).json<Record<string, unknown> & { meta?: { total_pages?: number } }>();
  const items = (b[o.plural] as F[] | undefined) ?? [];
  return { items: items.map(map), next: page < (b.meta?.total_pages ?? 1) ? `${view}:${page + 1}` : null };
}

function person(i: ContactInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (i.firstName !== undefined) out.first_name = i.firstName;
  if (i.lastName !== undefined) out.last_name = i.lastName;
  if (i.email !== undefined) out.email = i.email;
  if (i.phone !== undefined) out.mobile_number = i.phone;
  if (i.title !== undefined) out.job_title = i.title;
  return out;
}

const one = async (o: Obj, p: Promise<{ json<T>(): T }>) => (await p).json<Record<string, F>>()[o.singular]!;
const path = (id: string) => `/contacts/${encodeURIComponent(id)}`;

export const freshsales: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'errors.message.0', 'errors.message', 'message'),
  crm: {
    listContacts: (call, a) => list(call, CONTACTS, a, contact),
    createContact: async (call, input) =>
      contact(
        await one(CONTACTS, call({ method: 'POST', path: '/contacts', json: { contact: person(input) } })),
      ),
    getContact: async (call, id) => contact(await one(CONTACTS, call({ method: 'GET', path: path(id) }))),
    updateContact: async (call, id, input) =>
      contact(await one(CONTACTS, call({ method: 'PUT', path: path(id), json: { contact: person(input) } }))),
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: path(id) });
    },
    listCompanies: (call, a) => list(call, ACCOUNTS, a, company),
    createCompany: async (call, input) =>
      company(
        await one(
          ACCOUNTS,
          call({
            method: 'POST',
            path: '/sales_accounts',
            json: { sales_account: { name: input.name, website: input.domain } },
          }),
        ),
      ),
    listDeals: (call, a) => list(call, DEALS, a, deal),
    createDeal: async (call, input) =>
      deal(
        await one(
          DEALS,
          call({
            method: 'POST',
            path: '/deals',
            json: { deal: { name: input.name, amount: input.amount } },
          }),
        ),
      ),
  },
};
