import { errors } from '../../../core/errors.ts';
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

// Close API v1 (https://developer.close.com/): contacts, leads (companies) and opportunities (deals) under
// /api/v1/<object>/ (trailing slash), paged by `_skip` / `_limit` with `has_more`. A contact has one `name`
// and lists of `emails` / `phones`; one created without `lead_id` gets a new lead. Opportunities have no name
// (their `note` is shown as one), a `value` in cents, and must belong to a lead. The API key is the HTTP
// Basic user name (the catalogue's auth). Errors: `{ error }` or `{ errors, 'field-errors' }`.

type C = Record<string, unknown> & { id: string };

const firstOf = (v: unknown, key: string) =>
  Array.isArray(v) && v.length ? str((v[0] as Record<string, unknown>)[key]) : null;

function splitName(name: unknown): { first: string | null; last: string | null } {
  const n = str(name);
  if (!n) return { first: null, last: null };
  const i = n.indexOf(' ');
  return i < 0 ? { first: n, last: null } : { first: n.slice(0, i), last: n.slice(i + 1) };
}

const contact = (c: C): Contact => {
  const { first, last } = splitName(c.name);
  return {
    id: c.id,
    firstName: first,
    lastName: last,
    email: firstOf(c.emails, 'email'),
    phone: firstOf(c.phones, 'phone'),
    title: str(c.title),
    companyId: str(c.lead_id),
    createdAt: iso(c.date_created),
    updatedAt: iso(c.date_updated),
    rawData: c,
  };
};
const domainOf = (url: unknown) => {
  try {
    return typeof url === 'string' ? new URL(url).hostname : null;
  } catch {
    return str(url);
  }
};
const company = (c: C): Company => ({
  id: c.id,
  name: str(c.display_name) ?? str(c.name),
  domain: domainOf(c.url),
  industry: null,
  createdAt: iso(c.date_created),
  updatedAt: iso(c.date_updated),
  rawData: c,
});
const deal = (c: C): Deal => ({
  id: c.id,
  name: str(c.note),
  amount: typeof c.value === 'number' ? c.value / 100 : null,
  stage: str(c.status_label),
  createdAt: iso(c.date_created),
  updatedAt: iso(c.date_updated),
  rawData: c,
});

async function list<T>(
  call: ProviderCall,
  object: string,
  a: { cursor?: string; limit: number },
  map: (c: C) => T,
): Promise<Page<T>> {
  const skip = Number(a.cursor ?? 0);
  const b = (
    await call({ method: 'GET', path: `/${object}/`, query: { _skip: skip, _limit: a.limit } })
  ).json<{ data: C[]; has_more?: boolean }>();
  return { items: b.data.map(map), next: b.has_more ? String(skip + b.data.length) : null };
}

/** The contact's name from the unified first and last names (Close keeps one). */
function contactBody(i: ContactInput, current?: C): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (i.firstName !== undefined || i.lastName !== undefined) {
    const was = splitName(current?.name);
    out.name = [i.firstName ?? was.first, i.lastName ?? was.last].filter(Boolean).join(' ');
  }
  if (i.title !== undefined) out.title = i.title;
  if (i.email !== undefined) out.emails = [{ type: 'office', email: i.email }];
  if (i.phone !== undefined) out.phones = [{ type: 'office', phone: i.phone }];
  return out;
}

const path = (object: string, id: string) => `/${object}/${encodeURIComponent(id)}/`;
const one = async (p: Promise<{ json<T>(): T }>) => (await p).json<C>();

export const close: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'error', 'errors.0'),
  crm: {
    listContacts: (call, a) => list(call, 'contact', a, contact),
    createContact: async (call, input) =>
      contact(await one(call({ method: 'POST', path: '/contact/', json: contactBody(input) }))),
    getContact: async (call, id) => contact(await one(call({ method: 'GET', path: path('contact', id) }))),
    async updateContact(call, id, input) {
      const needsName = input.firstName === undefined || input.lastName === undefined;
      const current = needsName ? await one(call({ method: 'GET', path: path('contact', id) })) : undefined;
      return contact(
        await one(call({ method: 'PUT', path: path('contact', id), json: contactBody(input, current) })),
      );
    },
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: path('contact', id) });
    },
    listCompanies: (call, a) => list(call, 'lead', a, company),
    createCompany: async (call, input) =>
      company(
        await one(
          call({
            method: 'POST',
            path: '/lead/',
            json: { name: input.name, ...(input.domain ? { url: `https://${input.domain}` } : {}) },
          }),
        ),
      ),
    listDeals: (call, a) => list(call, 'opportunity', a, deal),
    createDeal: async () => {
      throw errors.validation(
        'Close opportunities belong to a lead: create it with passthrough (POST /opportunity/ with lead_id).',
      );
    },
  },
};
