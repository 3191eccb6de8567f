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

// HubSpot CRM v3 (https://developers.hubspot.com/docs/api/crm): objects carry `properties`, lists page with
// `after` and answer `paging.next.after`. Errors: `{ status: 'error', message, category, correlationId }`.

type HsObject = {
  id: string;
  properties: Record<string, string | null>;
  createdAt?: string;
  updatedAt?: string;
  associations?: { companies?: { results?: { id: string }[] } };
};
type HsList = { results: HsObject[]; paging?: { next?: { after?: string } } };

const CONTACT_PROPS = 'firstname,lastname,email,phone,jobtitle,createdate,lastmodifieddate';

function contact(o: HsObject): Contact {
  const p = o.properties ?? {};
  return {
    id: o.id,
    firstName: str(p.firstname),
    lastName: str(p.lastname),
    email: str(p.email),
    phone: str(p.phone),
    title: str(p.jobtitle),
    companyId: o.associations?.companies?.results?.[0]?.id ?? null,
    createdAt: iso(o.createdAt ?? p.createdate),
    updatedAt: iso(o.updatedAt ?? p.lastmodifieddate),
    rawData: o as unknown as Record<string, unknown>,
  };
}

function contactProps(i: ContactInput): Record<string, string> {
  const out: Record<string, string> = {};
  if (i.firstName !== undefined) out.firstname = i.firstName;
  if (i.lastName !== undefined) out.lastname = i.lastName;
  if (i.email !== undefined) out.email = i.email;
  if (i.phone !== undefined) out.phone = i.phone;
  if (i.title !== undefined) out.jobtitle = i.title;
  return out;
}

const company = (o: HsObject): Company => ({
  id: o.id,
  name: str(o.properties?.name),
  domain: str(o.properties?.domain),
  industry: str(o.properties?.industry),
  createdAt: iso(o.createdAt),
  updatedAt: iso(o.updatedAt),
  rawData: o as unknown as Record<string, unknown>,
});

const deal = (o: HsObject): Deal => {
  const amount = o.properties?.amount;
  return {
    id: o.id,
    name: str(o.properties?.dealname),
    amount: amount === null || amount === undefined || amount === '' ? null : Number(amount),
    stage: str(o.properties?.dealstage),
    createdAt: iso(o.createdAt),
    updatedAt: iso(o.updatedAt),
    rawData: o as unknown as Record<string, unknown>,
  };
};

async function list<T>(
  call: ProviderCall,
  object: string,
  props: string,
  a: { cursor?: string; limit: number },
  map: (o: HsObject) => T,
  extra: Record<string, string> = {},
): Promise<Page<T>> {
  const res = await call({
    method: 'GET',
    path: `/crm/v3/objects/${object}`,
    query: { limit: a.limit, after: a.cursor, properties: props, ...extra },
  });
  const body = res.json<HsList>();
  return { items: body.results.map(map), next: body.paging?.next?.after ?? null };
}

export const hubspot: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'message'),
  async account(call, tokens) {
    // HubSpot's token introspection: the hub (portal) the token acts in.
    const res = await call({
      method: 'GET',
      path: `/oauth/v1/access-tokens/${encodeURIComponent(tokens.accessToken)}`,
    });
    const b = res.json<{ hub_id?: number; hub_domain?: string; user?: string }>();
    return { id: String(b.hub_id ?? ''), name: b.hub_domain ?? null };
  },
  async revoke(call, tokens) {
    if (!tokens.refreshToken) return;
    await call({
      method: 'DELETE',
      path: `/oauth/v1/refresh-tokens/${encodeURIComponent(tokens.refreshToken)}`,
    });
  },
  crm: {
    listContacts: (call, a) =>
      list(call, 'contacts', CONTACT_PROPS, a, contact, { associations: 'companies' }),
    async createContact(call, input) {
      const res = await call({
        method: 'POST',
        path: '/crm/v3/objects/contacts',
        json: { properties: contactProps(input) },
      });
      return contact(res.json<HsObject>());
    },
    async getContact(call, id) {
      const res = await call({
        method: 'GET',
        path: `/crm/v3/objects/contacts/${encodeURIComponent(id)}`,
        query: { properties: CONTACT_PROPS, associations: 'companies' },
      });
      return contact(res.json<HsObject>());
    },
    async updateContact(call, id, input) {
      const res = await call({
        method: 'PATCH',
        path: `/crm/v3/objects/contacts/${encodeURIComponent(id)}`,
        json: { properties: contactProps(input) },
      });
      return contact(res.json<HsObject>());
    },
    async deleteContact(call, id) {
      await call({ method: 'DELETE', path: `/crm/v3/objects/contacts/${encodeURIComponent(id)}` });
    },
    listCompanies: (call, a) => list(call, 'companies', 'name,domain,industry', a, company),
    async createCompany(call, input) {
      const properties: Record<string, string> = { name: input.name };
      if (input.domain) properties.domain = input.domain;
      if (input.industry) properties.industry = input.industry;
      const res = await call({ method: 'POST', path: '/crm/v3/objects/companies', json: { properties } });
      return company(res.json<HsObject>());
    },
    listDeals: (call, a) => list(call, 'deals', 'dealname,amount,dealstage', a, deal),
    async createDeal(call, input) {
      const properties: Record<string, string> = { dealname: input.name };
      if (input.amount !== undefined) properties.amount = String(input.amount);
      if (input.stage) properties.dealstage = input.stage;
      const res = await call({ method: 'POST', path: '/crm/v3/objects/deals', json: { properties } });
      return deal(res.json<HsObject>());
    },
  },
};
