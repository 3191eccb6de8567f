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
  str,
} from './types.ts';

// Pipedrive API v1 (https://developers.pipedrive.com/docs/api/v1): persons, organizations and deals under
// the company's own `api_domain` (from the token answer) + `/api/v1`. Answers `{ success, data,
// additional_data: { pagination: { start, limit, more_items_in_collection, next_start } } }`: offset pages.
// Errors `{ success: false, error, errorCode }`. OAuth with HTTP Basic client auth.

type P = Record<string, unknown> & { id: number };
type PList = {
  data: P[] | null;
  additional_data?: { pagination?: { more_items_in_collection?: boolean; next_start?: number } };
};

const first = (v: unknown): string | null => {
  if (Array.isArray(v)) return str((v.find((x) => x?.primary) ?? v[0])?.value);
  return str(v);
};
// Pipedrive times are 'YYYY-MM-DD HH:MM:SS' in UTC.
const time = (v: unknown) => (typeof v === 'string' ? iso(`${v.replace(' ', 'T')}Z`) : null);
const refId = (v: unknown): string | null => {
  if (v && typeof v === 'object') return String((v as { value?: unknown }).value ?? '') || null;
  return v === null || v === undefined ? null : String(v);
};

const contact = (p: P): Contact => ({
  id: String(p.id),
  firstName: str(p.first_name),
  lastName: str(p.last_name),
  email: first(p.email),
  phone: first(p.phone),
  title: str(p.job_title),
  companyId: refId(p.org_id),
  createdAt: time(p.add_time),
  updatedAt: time(p.update_time),
  rawData: p,
});
const company = (p: P): Company => ({
  id: String(p.id),
  name: str(p.name),
  domain: str(p.website),
  industry: str(p.industry),
  createdAt: time(p.add_time),
  updatedAt: time(p.update_time),
  rawData: p,
});
const deal = (p: P): Deal => ({
  id: String(p.id),
  name: str(p.title),
  amount: typeof p.value === 'number' ? p.value : null,
  stage: p.stage_id === undefined || p.stage_id === null ? null : String(p.stage_id),
  createdAt: time(p.add_time),
  updatedAt: time(p.update_time),
  rawData: p,
});

async function list<T>(
  call: ProviderCall,
  path: string,
  a: { cursor?: string; limit: number },
  map: (p: P) => T,
): Promise<Page<T>> {
  const b = (
    await call({ method: 'GET', path, query: { start: a.cursor ?? 0, limit: a.limit } })
  ).json<PList>();
  const pg = b.additional_data?.pagination;
  return {
    items: (b.data ?? []).map(map),
    next: pg?.more_items_in_collection ? String(pg.next_start) : null,
  };
}

function personBody(i: ContactInput, forCreate: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (i.firstName !== undefined) out.first_name = i.firstName;
  if (i.lastName !== undefined) out.last_name = i.lastName;
  if (i.email !== undefined) out.email = [{ value: i.email, primary: true, label: 'work' }];
  if (i.phone !== undefined) out.phone = [{ value: i.phone, primary: true, label: 'work' }];
  if (i.title !== undefined) out.job_title = i.title;
  // `name` is required on create: the full name, else the e-mail.
  const name = [i.firstName, i.lastName].filter(Boolean).join(' ') || i.email;
  if (forCreate || i.firstName !== undefined || i.lastName !== undefined) if (name) out.name = name;
  return out;
}

const data = async (p: Promise<{ json<T>(): T }>) => (await p).json<{ data: P }>().data;

export const pipedrive: ConnectorCode = {
  apiUrlFrom: (meta) =>
    typeof meta.api_domain === 'string' ? `${meta.api_domain.replace(/\/+$/, '')}/api/v1` : null,
  errorMessage: (res) => messageAt(res, 'error', 'message'),
  async account(call) {
    const u = await data(call({ method: 'GET', path: '/users/me' }));
    return { id: String(u.company_id ?? u.id), name: str(u.company_name) ?? str(u.company_domain) };
  },
  crm: {
    listContacts: (call, a) => list(call, '/persons', a, contact),
    createContact: async (call, input) =>
      contact(await data(call({ method: 'POST', path: '/persons', json: personBody(input, true) }))),
    getContact: async (call, id) =>
      contact(await data(call({ method: 'GET', path: `/persons/${encodeURIComponent(id)}` }))),
    updateContact: async (call, id, input) =>
      contact(
        await data(
          call({ method: 'PUT', path: `/persons/${encodeURIComponent(id)}`, json: personBody(input, false) }),
        ),
      ),
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: `/persons/${encodeURIComponent(id)}` });
    },
    listCompanies: (call, a) => list(call, '/organizations', a, company),
    // Organizations have no standard domain or industry field; those inputs are kept only where the
    // account has custom fields of these names (sent, and ignored by Pipedrive otherwise).
    createCompany: async (call, input) =>
      company(
        await data(
          call({
            method: 'POST',
            path: '/organizations',
            json: { name: input.name, website: input.domain, industry: input.industry },
          }),
        ),
      ),
    listDeals: (call, a) => list(call, '/deals', a, deal),
    createDeal: async (call, input) =>
      deal(
        await data(
          call({
            method: 'POST',
            path: '/deals',
            json: {
              title: input.name,
              ...(input.amount !== undefined ? { value: input.amount } : {}),
              ...(input.stage && /^\d+$/.test(input.stage) ? { stage_id: Number(input.stage) } : {}),
            },
          }),
        ),
      ),
  },
};
