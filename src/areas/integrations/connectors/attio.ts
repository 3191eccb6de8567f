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

// Attio REST API v2 (https://docs.attio.com/rest-api/overview): records of the standard objects `people`,
// `companies` and `deals` under /v2/objects/<object>/records. Lists are POST …/records/query with
// `limit`/`offset` (no "more" flag: a full page means there may be more). A record is `{ id: { record_id },
// created_at, values: { <attribute>: [ { value | first_name | email_address | … } ] } }`: every attribute is a
// list of values, the current one first. Writes take `{ data: { values } }` with simple values.
// Errors: `{ status_code, type, code, message }`.

type V = Record<string, unknown>;
type R = { id: { record_id: string }; created_at?: string; values: Record<string, V[]> } & V;

const val = (r: R, attr: string, key = 'value'): unknown => r.values?.[attr]?.[0]?.[key];

const contact = (r: R): Contact => ({
  id: r.id.record_id,
  firstName: str(val(r, 'name', 'first_name')),
  lastName: str(val(r, 'name', 'last_name')),
  email: str(val(r, 'email_addresses', 'email_address')),
  phone: str(val(r, 'phone_numbers', 'original_phone_number')),
  title: str(val(r, 'job_title')),
  companyId: str(val(r, 'company', 'target_record_id')),
  createdAt: iso(r.created_at),
  // Attio keeps when each value became active, not when the record last changed.
  updatedAt: null,
  rawData: r,
});
const company = (r: R): Company => ({
  id: r.id.record_id,
  name: str(val(r, 'name')),
  domain: str(val(r, 'domains', 'domain')),
  industry: str((val(r, 'categories', 'option') as V | undefined)?.title),
  createdAt: iso(r.created_at),
  updatedAt: null,
  rawData: r,
});
const deal = (r: R): Deal => {
  const amount = val(r, 'value', 'currency_value');
  return {
    id: r.id.record_id,
    name: str(val(r, 'name')),
    amount: typeof amount === 'number' ? amount : null,
    stage: str((val(r, 'stage', 'status') as V | undefined)?.title),
    createdAt: iso(r.created_at),
    updatedAt: null,
    rawData: r,
  };
};

const records = (object: string) => `/objects/${object}/records`;
const record = (object: string, id: string) => `${records(object)}/${encodeURIComponent(id)}`;

async function list<T>(
  call: ProviderCall,
  object: string,
  a: { cursor?: string; limit: number },
  map: (r: R) => T,
): Promise<Page<T>> {
  const offset = Number(a.cursor ?? 0);
  const b = (
    await call({ method: 'POST', path: `${records(object)}/query`, json: { limit: a.limit, offset } })
  ).json<{ data: R[] }>();
  return { items: b.data.map(map), next: b.data.length === a.limit ? String(offset + a.limit) : null };
}

function personValues(i: ContactInput, current?: R): V {
  const out: V = {};
  if (i.firstName !== undefined || i.lastName !== undefined) {
    const first = i.firstName ?? str(current && val(current, 'name', 'first_name')) ?? '';
    const last = i.lastName ?? str(current && val(current, 'name', 'last_name')) ?? '';
    out.name = [{ first_name: first, last_name: last, full_name: [first, last].filter(Boolean).join(' ') }];
  }
  if (i.email !== undefined) out.email_addresses = [i.email];
  if (i.phone !== undefined) out.phone_numbers = [{ original_phone_number: i.phone }];
  if (i.title !== undefined) out.job_title = i.title;
  return out;
}

const data = async (p: Promise<{ json<T>(): T }>) => (await p).json<{ data: R }>().data;

export const attio: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'message'),
  crm: {
    listContacts: (call, a) => list(call, 'people', a, contact),
    createContact: async (call, input) =>
      contact(
        await data(
          call({ method: 'POST', path: records('people'), json: { data: { values: personValues(input) } } }),
        ),
      ),
    getContact: async (call, id) => contact(await data(call({ method: 'GET', path: record('people', id) }))),
    async updateContact(call, id, input) {
      const partialName = (input.firstName === undefined) !== (input.lastName === undefined);
      const current = partialName
        ? await data(call({ method: 'GET', path: record('people', id) }))
        : undefined;
      return contact(
        await data(
          call({
            method: 'PATCH',
            path: record('people', id),
            json: { data: { values: personValues(input, current) } },
          }),
        ),
      );
    },
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: record('people', id) });
    },
    listCompanies: (call, a) => list(call, 'companies', a, company),
    createCompany: async (call, input) =>
      company(
        await data(
          call({
            method: 'POST',
            path: records('companies'),
            json: {
              data: { values: { name: input.name, ...(input.domain ? { domains: [input.domain] } : {}) } },
            },
          }),
        ),
      ),
    listDeals: (call, a) => list(call, 'deals', a, deal),
    createDeal: async (call, input) =>
      deal(
        await data(
          call({
            method: 'POST',
            path: records('deals'),
            json: {
              data: {
                values: {
                  name: input.name,
                  // `stage` is required on Attio's deals: its first default stage unless one is given.
                  stage: input.stage ?? 'Lead',
                  ...(input.amount !== undefined ? { value: input.amount } : {}),
                },
              },
            },
          }),
        ),
      ),
  },
};
