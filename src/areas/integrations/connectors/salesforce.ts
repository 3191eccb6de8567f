import { errors } from '../../../core/errors.ts';
import {
  type Company,
  type ConnectorCode,
  type Contact,
  type ContactInput,
  type Deal,
  iso,
  type Page,
  type ProviderCall,
  type ProviderResponse,
  str,
} from './types.ts';

// Salesforce REST API v60.0 (https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta): records are
// read with SOQL (`/query?q=`) and written through `/sobjects/<Type>`. Each org has its own host: the token
// answer's `instance_url` is the connection's API base. Pages are keyset on Id (`WHERE Id > :last ORDER BY
// Id LIMIT n+1`), which needs no server cursor and has no OFFSET cap. Errors are an array
// `[{ message, errorCode, fields }]`; an expired session is 401 INVALID_SESSION_ID. Tokens carry no
// expires_in: they are refreshed on the 401.

const V = '/services/data/v60.0';
type Rec = Record<string, unknown> & { Id: string };

const CONTACT = 'Id, FirstName, LastName, Email, Phone, Title, AccountId, CreatedDate, LastModifiedDate';
const ACCOUNT = 'Id, Name, Website, Industry, CreatedDate, LastModifiedDate';
const OPPORTUNITY = 'Id, Name, Amount, StageName, CreatedDate, LastModifiedDate';

const soqlString = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const safeId = (id: string) => {
  if (!/^[a-zA-Z0-9]{15,18}$/.test(id)) throw errors.validation('That is not a Salesforce record id.');
  return id;
};

const contact = (r: Rec): Contact => ({
  id: r.Id,
  firstName: str(r.FirstName),
  lastName: str(r.LastName),
  email: str(r.Email),
  phone: str(r.Phone),
  title: str(r.Title),
  companyId: str(r.AccountId),
  createdAt: iso(r.CreatedDate),
  updatedAt: iso(r.LastModifiedDate),
  rawData: r,
});
const company = (r: Rec): Company => ({
  id: r.Id,
  name: str(r.Name),
  domain: str(r.Website),
  industry: str(r.Industry),
  createdAt: iso(r.CreatedDate),
  updatedAt: iso(r.LastModifiedDate),
  rawData: r,
});
const deal = (r: Rec): Deal => ({
  id: r.Id,
  name: str(r.Name),
  amount: typeof r.Amount === 'number' ? r.Amount : null,
  stage: str(r.StageName),
  createdAt: iso(r.CreatedDate),
  updatedAt: iso(r.LastModifiedDate),
  rawData: r,
});

async function query<T>(
  call: ProviderCall,
  type: string,
  fields: string,
  a: { cursor?: string; limit: number },
  map: (r: Rec) => T,
): Promise<Page<T>> {
  const after = a.cursor ? ` WHERE Id > ${soqlString(a.cursor)}` : '';
  const q = `SELECT ${fields} FROM ${type}${after} ORDER BY Id LIMIT ${a.limit + 1}`;
  const b = (await call({ method: 'GET', path: `${V}/query`, query: { q } })).json<{ records: Rec[] }>();
  const items = b.records.slice(0, a.limit);
  return { items: items.map(map), next: b.records.length > a.limit ? items.at(-1)!.Id : null };
}

async function getOne(call: ProviderCall, type: string, id: string, fields: string): Promise<Rec> {
  const res = await call({
    method: 'GET',
    path: `${V}/sobjects/${type}/${safeId(id)}`,
    query: { fields: fields.replace(/ /g, '') },
  });
  return res.json<Rec>();
}

async function create(
  call: ProviderCall,
  type: string,
  body: Record<string, unknown>,
  fields: string,
): Promise<Rec> {
  const res = await call({ method: 'POST', path: `${V}/sobjects/${type}`, json: body });
  return getOne(call, type, res.json<{ id: string }>().id, fields);
}

function contactBody(i: ContactInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (i.firstName !== undefined) out.FirstName = i.firstName;
  if (i.lastName !== undefined) out.LastName = i.lastName;
  if (i.email !== undefined) out.Email = i.email;
  if (i.phone !== undefined) out.Phone = i.phone;
  if (i.title !== undefined) out.Title = i.title;
  return out;
}

function errorMessage(res: ProviderResponse): string | null {
  try {
    const b = res.json<unknown>();
    if (Array.isArray(b) && b[0]?.message) return `${b[0].errorCode ?? 'ERROR'}: ${b[0].message}`;
    const o = b as { error?: string; error_description?: string; message?: string };
    return o.error_description ?? o.message ?? o.error ?? null;
  } catch {
    return null;
  }
}

export const salesforce: ConnectorCode = {
  apiUrlFrom: (meta) => (typeof meta.instance_url === 'string' ? meta.instance_url : null),
  errorMessage,
  async account(call) {
    const b = (await call({ method: 'GET', path: '/services/oauth2/userinfo' })).json<{
      organization_id?: string;
      preferred_username?: string;
      name?: string;
    }>();
    return { id: b.organization_id ?? '', name: b.preferred_username ?? b.name ?? null };
  },
  crm: {
    listContacts: (call, a) => query(call, 'Contact', CONTACT, a, contact),
    createContact: async (call, input) => {
      // LastName is required by Salesforce; say so before the provider does.
      if (!input.lastName) throw errors.validation('Salesforce contacts need lastName.');
      return contact(await create(call, 'Contact', contactBody(input), CONTACT));
    },
    getContact: async (call, id) => contact(await getOne(call, 'Contact', id, CONTACT)),
    async updateContact(call, id, input) {
      await call({ method: 'PATCH', path: `${V}/sobjects/Contact/${safeId(id)}`, json: contactBody(input) });
      return contact(await getOne(call, 'Contact', id, CONTACT));
    },
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: `${V}/sobjects/Contact/${safeId(id)}` });
    },
    listCompanies: (call, a) => query(call, 'Account', ACCOUNT, a, company),
    createCompany: async (call, input) =>
      company(
        await create(
          call,
          'Account',
          {
            Name: input.name,
            ...(input.domain ? { Website: input.domain } : {}),
            ...(input.industry ? { Industry: input.industry } : {}),
          },
          ACCOUNT,
        ),
      ),
    listDeals: (call, a) => query(call, 'Opportunity', OPPORTUNITY, a, deal),
    createDeal: async (call, input) => {
      // Opportunities need a stage and a close date: a new one is Prospecting, closing in 30 days.
      const close = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
      return deal(
        await create(
          call,
          'Opportunity',
          {
            Name: input.name,
            StageName: input.stage ?? 'Prospecting',
            CloseDate: close,
            ...(input.amount !== undefined ? { Amount: input.amount } : {}),
          },
          OPPORTUNITY,
        ),
      );
    },
  },
};
