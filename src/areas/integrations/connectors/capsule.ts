import { errors } from '../../../core/errors.ts';
import type {
  Company,
  ConnectorCode,
  Contact,
  ContactInput,
  Deal,
  Page,
  ProviderCall,
  ProviderResponse,
} from './types.ts';
import { iso, messageAt, str } from './types.ts';

// Capsule CRM API v2 (https://developer.capsulecrm.com/v2/overview/getting-started): parties are people
// or organisations (`type`), opportunities are deals. Lists page with `page` / `perPage` and say there is
// more with a `Link: <…>; rel="next"` header. Records are wrapped (`{ party }`, `{ parties: [...] }`) both
// ways. An opportunity needs a party and a milestone. Errors: `{ message, errors: [ { message } ] }`.

type P = Record<string, unknown> & { id: number };

const firstOf = (v: unknown, key: string) =>
  Array.isArray(v) && v.length ? str((v[0] as Record<string, unknown>)[key]) : null;

const contact = (p: P): Contact => ({
  id: String(p.id),
  firstName: str(p.firstName),
  lastName: str(p.lastName),
  email: firstOf(p.emailAddresses, 'address'),
  phone: firstOf(p.phoneNumbers, 'number'),
  title: str(p.jobTitle),
  companyId: p.organisation && typeof p.organisation === 'object' ? String((p.organisation as P).id) : null,
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
  rawData: p,
});
const company = (p: P): Company => ({
  id: String(p.id),
  name: str(p.name),
  domain: firstOf(p.websites, 'address'),
  industry: null,
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
  rawData: p,
});
const deal = (p: P): Deal => {
  const value = p.value as { amount?: number } | null | undefined;
  return {
    id: String(p.id),
    name: str(p.name),
    amount: typeof value?.amount === 'number' ? value.amount : null,
    stage: str((p.milestone as { name?: string } | undefined)?.name),
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
    rawData: p,
  };
};

const hasNext = (res: ProviderResponse) => /rel="next"/.test(res.headers.get('link') ?? '');

async function parties<T>(
  call: ProviderCall,
  type: 'person' | 'organisation',
  a: { cursor?: string; limit: number },
  map: (p: P) => T,
): Promise<Page<T>> {
  const page = Number(a.cursor ?? 1);
  const res = await call({ method: 'GET', path: '/parties', query: { page, perPage: a.limit } });
  // People and organisations share one list: a page may hold fewer of the kind asked for than `limit`.
  const items = res
    .json<{ parties: P[] }>()
    .parties.filter((p) => p.type === type)
    .map(map);
  return { items, next: hasNext(res) ? String(page + 1) : null };
}

function person(i: ContactInput): Record<string, unknown> {
  const out: Record<string, unknown> = { type: 'person' };
  if (i.firstName !== undefined) out.firstName = i.firstName;
  if (i.lastName !== undefined) out.lastName = i.lastName;
  if (i.title !== undefined) out.jobTitle = i.title;
  if (i.email !== undefined) out.emailAddresses = [{ type: 'Work', address: i.email }];
  if (i.phone !== undefined) out.phoneNumbers = [{ type: 'Work', number: i.phone }];
  return out;
}

const party = async (p: Promise<{ json<T>(): T }>) => (await p).json<{ party: P }>().party;
const path = (id: string) => `/parties/${encodeURIComponent(id)}`;

export const capsule: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'errors.0.message', 'message'),
  crm: {
    listContacts: (call, a) => parties(call, 'person', a, contact),
    createContact: async (call, input) =>
      contact(await party(call({ method: 'POST', path: '/parties', json: { party: person(input) } }))),
    getContact: async (call, id) => contact(await party(call({ method: 'GET', path: path(id) }))),
    async updateContact(call, id, input) {
      const { type: _t, ...changes } = person(input);
      // Capsule adds to a party's lists on update: the old first e-mail or phone is replaced by id.
      const current =
        input.email !== undefined || input.phone !== undefined
          ? await party(call({ method: 'GET', path: path(id) }))
          : null;
      if (
        current &&
        input.email !== undefined &&
        Array.isArray(current.emailAddresses) &&
        current.emailAddresses[0]
      )
        changes.emailAddresses = [{ id: (current.emailAddresses[0] as P).id, address: input.email }];
      if (
        current &&
        input.phone !== undefined &&
        Array.isArray(current.phoneNumbers) &&
        current.phoneNumbers[0]
      )
        changes.phoneNumbers = [{ id: (current.phoneNumbers[0] as P).id, number: input.phone }];
      return contact(await party(call({ method: 'PUT', path: path(id), json: { party: changes } })));
    },
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: path(id) });
    },
    listCompanies: (call, a) => parties(call, 'organisation', a, company),
    createCompany: async (call, input) =>
      company(
        await party(
          call({
            method: 'POST',
            path: '/parties',
            json: {
              party: {
                type: 'organisation',
                name: input.name,
                ...(input.domain ? { websites: [{ service: 'URL', address: input.domain }] } : {}),
              },
            },
          }),
        ),
      ),
    async listDeals(call, a) {
      const page = Number(a.cursor ?? 1);
      const res = await call({ method: 'GET', path: '/opportunities', query: { page, perPage: a.limit } });
      return {
        items: res.json<{ opportunities: P[] }>().opportunities.map(deal),
        next: hasNext(res) ? String(page + 1) : null,
      };
    },
    createDeal: async () => {
      throw errors.validation(
        'Capsule opportunities need a party and a milestone: create them with passthrough (POST /opportunities).',
      );
    },
  },
};
