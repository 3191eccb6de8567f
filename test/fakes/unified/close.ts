import type { UnifiedCase } from '../../unified-scenarios.ts';
import { basicUser, nextId, nowIso, startKitFake } from './kit.ts';

// Close API v1 as its reference describes it (https://developer.close.com/): /api/v1/{contact,lead,
// opportunity}/ with trailing slashes, `_skip`/`_limit` paging answering `{ data, has_more }`, a contact
// created without lead_id gets a new lead, PUT updates only the fields sent, opportunities need a lead
// and carry `value` in cents. The API key is the Basic user name with an empty password.

type Rec = Record<string, unknown> & { id: string };

export function closeFake() {
  const store: Record<string, Rec[]> = { contact: [], lead: [], opportunity: [] };
  const prefix: Record<string, string> = { contact: 'cont_', lead: 'lead_', opportunity: 'oppo_' };
  const make = (object: string, body: Record<string, unknown>): Rec => {
    const rec: Rec = {
      ...body,
      id: `${prefix[object]}${nextId()}x`,
      date_created: nowIso(),
      date_updated: nowIso(),
    };
    if (object === 'lead') rec.display_name = rec.name;
    store[object]!.push(rec);
    return rec;
  };
  const notFound = { status: 404, json: { error: 'Empty query: object does not exist.' } };
  return startKitFake({
    store,
    authorized: (r) => basicUser(r, ''),
    unauthorized: { status: 401, json: { error: 'The API key you provided is invalid.' } },
    notFound: () => notFound,
    routes: [
      [
        'GET',
        /^\/api\/v1\/(contact|lead|opportunity)\/$/,
        (r, m) => {
          const skip = Number(r.url.searchParams.get('_skip') ?? 0);
          const limit = Number(r.url.searchParams.get('_limit') ?? 100);
          const all = store[m[1]!]!;
          return { json: { data: all.slice(skip, skip + limit), has_more: skip + limit < all.length } };
        },
      ],
      [
        'POST',
        /^\/api\/v1\/(contact|lead|opportunity)\/$/,
        (r, m) => {
          const body = r.json();
          if (m[1] === 'opportunity' && !body.lead_id)
            return {
              status: 400,
              json: { errors: [], 'field-errors': { lead_id: 'This field is required.' } },
            };
          if (m[1] === 'contact' && !body.lead_id) body.lead_id = make('lead', { name: body.name }).id;
          return { json: make(m[1]!, body) };
        },
      ],
      [
        'GET',
        /^\/api\/v1\/(contact|lead|opportunity)\/([\w]+)\/$/,
        (_r, m) => {
          const rec = store[m[1]!]!.find((x) => x.id === m[2]);
          return rec ? { json: rec } : notFound;
        },
      ],
      [
        'PUT',
        /^\/api\/v1\/(contact|lead|opportunity)\/([\w]+)\/$/,
        (r, m) => {
          const rec = store[m[1]!]!.find((x) => x.id === m[2]);
          if (!rec) return notFound;
          return { json: Object.assign(rec, r.json(), { date_updated: nowIso() }) };
        },
      ],
      [
        'DELETE',
        /^\/api\/v1\/(contact|lead|opportunity)\/([\w]+)\/$/,
        (_r, m) => {
          const list = store[m[1]!]!;
          const i = list.findIndex((x) => x.id === m[2]);
          if (i < 0) return notFound;
          list.splice(i, 1);
          return { json: {} };
        },
      ],
    ],
  });
}

export const closeCase: UnifiedCase = {
  slug: 'close',
  category: 'crm',
  start: closeFake,
  env: (url) => ({ INTEGRATIONS_CLOSE_API_URL: `${url}/api/v1` }),
  without: ['createDeal'],
  seed(store) {
    const s = store as Record<string, Rec[]>;
    const lead = s.lead![0]?.id ?? 'lead_seed';
    s.opportunity!.push(
      {
        id: 'oppo_1',
        lead_id: lead,
        note: 'Big deal',
        value: 120000,
        status_label: 'Active',
        date_created: nowIso(),
        date_updated: nowIso(),
      },
      {
        id: 'oppo_2',
        lead_id: lead,
        note: 'Small deal',
        value: 5000,
        status_label: 'Won',
        date_created: nowIso(),
        date_updated: nowIso(),
      },
    );
  },
};
