import { errors } from '../../../core/errors.ts';
import type { Company, ConnectorCode, Contact, ContactInput, Deal, Page, ProviderCall } from './types.ts';
import { iso, messageAt, str } from './types.ts';

// Zendesk Sell Core API v2 (https://developer.zendesk.com/api-reference/sales-crm/introduction/): contacts
// are people or organizations (`is_organization`), so unified contacts are contacts with
// is_organization=false and companies those with true; deals under /v2/deals. Lists page with `page` and
// `per_page` and answer `{ items: [ { data, meta } ], meta: { links: { next_page } } }`; single records
// `{ data, meta }`; writes take `{ data: {...} }`. A deal needs a `contact_id`. Errors:
// `{ errors: [ { error: { code, message, details } } ] }`.

type Z = Record<string, unknown> & { id: number };
type List = { items: { data: Z }[]; meta?: { links?: { next_page?: string } } };

const contact = (z: Z): Contact => ({
  id: String(z.id),
  firstName: str(z.first_name),
  lastName: str(z.last_name),
  email: str(z.email),
  phone: str(z.phone) ?? str(z.mobile),
  title: str(z.title),
  companyId: z.contact_id === null || z.contact_id === undefined ? null : String(z.contact_id),
  createdAt: iso(z.created_at),
  updatedAt: iso(z.updated_at),
  rawData: z,
});
const company = (z: Z): Company => ({
  id: String(z.id),
  name: str(z.name),
  domain: str(z.website),
  industry: str(z.industry),
  createdAt: iso(z.created_at),
  updatedAt: iso(z.updated_at),
  rawData: z,
});
const deal = (z: Z): Deal => {
  const v = typeof z.value === 'string' ? Number(z.value) : z.value;
  return {
    id: String(z.id),
    name: str(z.name),
    amount: typeof v === 'number' && Number.isFinite(v) ? v : null,
    stage: z.stage_id === undefined || z.stage_id === null ? null : String(z.stage_id),
    createdAt: iso(z.created_at),
    updatedAt: iso(z.updated_at),
    rawData: z,
  };
};

async function list<T>(
  call: ProviderCall,
  path: string,
  extra: Record<string, string>,
  a: { cursor?: string; limit: number },
  map: (z: Z) => T,
): Promise<Page<T>> {
  const page = Number(a.cursor ?? 1);
  const b = (
    await call({ method: 'GET', path, query: { ...extra, page, per_page: a.limit, sort_by: 'id' } })
  ).json<List>();
  return { items: b.items.map((i) => map(i.data)), next: b.meta?.links?.next_page ? String(page + 1) : null };
}

function person(i: ContactInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (i.firstName !== undefined) out.first_name = i.firstName;
  if (i.lastName !== undefined) out.last_name = i.lastName;
  if (i.email !== undefined) out.email = i.email;
  if (i.phone !== undefined) out.phone = i.phone;
  if (i.title !== undefined) out.title = i.title;
  return out;
}

const data = async (p: Promise<{ json<T>(): T }>) => (await p).json<{ data: Z }>().data;
const path = (id: string) => `/contacts/${encodeURIComponent(id)}`;

export const zendeskSell: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'errors.0.error.message', 'error'),
  crm: {
    listContacts: (call, a) => list(call, '/contacts', { is_organization: 'false' }, a, contact),
    createContact: async (call, input) =>
      contact(
        await data(
          call({
            method: 'POST',
            path: '/contacts',
            json: { data: { ...person(input), is_organization: false } },
          }),
        ),
      ),
    getContact: async (call, id) => contact(await data(call({ method: 'GET', path: path(id) }))),
    updateContact: async (call, id, input) =>
      contact(await data(call({ method: 'PUT', path: path(id), json: { data: person(input) } }))),
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: path(id) });
    },
    listCompanies: (call, a) => list(call, '/contacts', { is_organization: 'true' }, a, company),
    createCompany: async (call, input) =>
      company(
        await data(
          call({
            method: 'POST',
            path: '/contacts',
            json: {
              data: {
                is_organization: true,
                name: input.name,
                website: input.domain,
                industry: input.industry,
              },
            },
          }),
        ),
      ),
    listDeals: (call, a) => list(call, '/deals', {}, a, deal),
    createDeal: async () => {
      throw errors.validation(
        'Zendesk Sell deals belong to a contact: create them with passthrough (POST /deals with contact_id).',
      );
    },
  },
};
