import { integrationsErrors } from '../errors.ts';
import {
  type Company,
  type ConnectorCode,
  type Contact,
  type ContactInput,
  type Deal,
  iso,
  messageAt,
  type Page,
  type ProviderCall,
  type ProviderResponse,
  str,
} from './types.ts';

// Zoho CRM API v6 (https://www.zoho.com/crm/developer/docs/api/v6/): modules Contacts, Accounts and Deals
// under https://www.zohoapis.<region>/crm/v6. A list GET must name its `fields` and pages with `page` and
// `per_page` (`info.more_records`); an empty list is 204 with no body. Writes take `{ data: [record] }` and
// answer one result per record (`{ code, status: 'success'|'error', details }`), an error inside a 2xx.
// The token goes as `Authorization: Zoho-oauthtoken …` (the catalogue's placement).

type Z = Record<string, unknown> & { id: string };
type Result = { code?: string; status?: string; message?: string; details?: Record<string, unknown> };

const FIELDS = {
  Contacts: 'First_Name,Last_Name,Email,Phone,Title,Account_Name,Created_Time,Modified_Time',
  Accounts: 'Account_Name,Website,Industry,Created_Time,Modified_Time',
  Deals: 'Deal_Name,Amount,Stage,Created_Time,Modified_Time',
} as const;
type Module = keyof typeof FIELDS;

const lookupId = (v: unknown) =>
  v && typeof v === 'object' ? (str((v as { id?: unknown }).id) ?? null) : null;

const contact = (z: Z): Contact => ({
  id: z.id,
  firstName: str(z.First_Name),
  lastName: str(z.Last_Name),
  email: str(z.Email),
  phone: str(z.Phone),
  title: str(z.Title),
  companyId: lookupId(z.Account_Name),
  createdAt: iso(z.Created_Time),
  updatedAt: iso(z.Modified_Time),
  rawData: z,
});
const company = (z: Z): Company => ({
  id: z.id,
  name: str(z.Account_Name),
  domain: str(z.Website),
  industry: str(z.Industry),
  createdAt: iso(z.Created_Time),
  updatedAt: iso(z.Modified_Time),
  rawData: z,
});
const deal = (z: Z): Deal => ({
  id: z.id,
  name: str(z.Deal_Name),
  amount: typeof z.Amount === 'number' ? z.Amount : null,
  stage: str(z.Stage),
  createdAt: iso(z.Created_Time),
  updatedAt: iso(z.Modified_Time),
  rawData: z,
});

/** A write's per-record result that says error (inside a 2xx), as a failure Pier maps. */
function failure(res: ProviderResponse) {
  if (res.status === 204 || !res.body.length) return null;
  let first: Result | undefined;
  try {
    const b = res.json<{ data?: Result[]; code?: string; message?: string }>();
    if (res.status === 401 || b.code === 'INVALID_TOKEN' || b.code === 'AUTHENTICATION_FAILURE')
      return { status: 401, message: b.message ?? 'invalid token', authExpired: true };
    first = Array.isArray(b.data) ? b.data[0] : undefined;
  } catch {
    return null;
  }
  if (first?.status !== 'error' || !first.code) return null;
  const message = `${first.code}: ${first.message ?? ''}`.trim();
  // An id Zoho does not know is INVALID_DATA naming the `id` field.
  if (first.code === 'INVALID_DATA' && first.details?.api_name === 'id') return { status: 404, message };
  return { status: first.code === 'MANDATORY_NOT_FOUND' ? 400 : 422, message };
}

async function list<T>(
  call: ProviderCall,
  module: Module,
  a: { cursor?: string; limit: number },
  map: (z: Z) => T,
): Promise<Page<T>> {
  const page = Number(a.cursor ?? 1);
  const res = await call({
    method: 'GET',
    path: `/${module}`,
    query: { fields: FIELDS[module], page, per_page: a.limit, sort_by: 'id', sort_order: 'asc' },
  });
  if (res.status === 204 || !res.body.length) return { items: [], next: null };
  const b = res.json<{ data?: Z[]; info?: { more_records?: boolean } }>();
  return { items: (b.data ?? []).map(map), next: b.info?.more_records ? String(page + 1) : null };
}

async function getOne(call: ProviderCall, module: Module, id: string): Promise<Z> {
  const res = await call({ method: 'GET', path: `/${module}/${encodeURIComponent(id)}` });
  const rec = res.status === 204 || !res.body.length ? undefined : res.json<{ data?: Z[] }>().data?.[0];
  if (!rec) throw integrationsErrors.providerResourceNotFound('zoho-crm', `no ${module} record ${id}`);
  return rec;
}

/** A write of one record; answers the new or changed record's id. */
async function write(call: ProviderCall, method: 'POST' | 'PUT', path: string, rec: Record<string, unknown>) {
  const res = await call({ method, path, json: { data: [rec], trigger: [] } });
  return String(res.json<{ data: Result[] }>().data[0]?.details?.id ?? '');
}

function contactRecord(i: ContactInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (i.firstName !== undefined) out.First_Name = i.firstName;
  if (i.lastName !== undefined) out.Last_Name = i.lastName;
  if (i.email !== undefined) out.Email = i.email;
  if (i.phone !== undefined) out.Phone = i.phone;
  if (i.title !== undefined) out.Title = i.title;
  return out;
}

export const zohoCrm: ConnectorCode = {
  failure,
  errorMessage: (res) => messageAt(res, 'message', 'data.0.message'),
  crm: {
    listContacts: (call, a) => list(call, 'Contacts', a, contact),
    async createContact(call, input) {
      const id = await write(call, 'POST', '/Contacts', contactRecord(input));
      return contact(await getOne(call, 'Contacts', id));
    },
    getContact: async (call, id) => contact(await getOne(call, 'Contacts', id)),
    async updateContact(call, id, input) {
      await write(call, 'PUT', `/Contacts/${encodeURIComponent(id)}`, contactRecord(input));
      return contact(await getOne(call, 'Contacts', id));
    },
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: `/Contacts/${encodeURIComponent(id)}` });
    },
    listCompanies: (call, a) => list(call, 'Accounts', a, company),
    async createCompany(call, input) {
      const rec = { Account_Name: input.name, Website: input.domain, Industry: input.industry };
      return company(await getOne(call, 'Accounts', await write(call, 'POST', '/Accounts', rec)));
    },
    listDeals: (call, a) => list(call, 'Deals', a, deal),
    async createDeal(call, input) {
      // Stage is mandatory in Zoho: the first stage of the standard pipeline unless one is given.
      const rec = { Deal_Name: input.name, Amount: input.amount, Stage: input.stage ?? 'Qualification' };
      return deal(await getOne(call, 'Deals', await write(call, 'POST', '/Deals', rec)));
    },
  },
};
