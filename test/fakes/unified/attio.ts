import type { UnifiedCase } from '../../unified-scenarios.ts';
import { type Answer, bearer, nextId, nowIso, type Req, startKitFake } from './kit.ts';

// Attio v2 as its reference describes it (https://docs.attio.com/rest-api/overview): records of people,
// companies and deals; lists by POST /v2/objects/{object}/records/query {limit, offset}; writes take simple
// values (`email_addresses: ['a@b']`, `name: 'Acme'`, `stage: 'Lead'`) and answer the record with every
// attribute as a list of value objects; deals require a stage. Bearer tokens.

type V = Record<string, unknown>;
type R = {
  id: { workspace_id: string; object_id: string; record_id: string };
  created_at: string;
  values: Record<string, V[]>;
};

const wrap = (object: string, values: V): Record<string, V[]> => {
  const out: Record<string, V[]> = {};
  const at = { active_from: nowIso(), active_until: null };
  for (const [k, v] of Object.entries(values)) {
    const list = Array.isArray(v) ? v : [v];
    out[k] = list.map((x): V => {
      if (k === 'email_addresses') return { ...at, email_address: x, attribute_type: 'email-address' };
      if (k === 'domains') return { ...at, domain: x, attribute_type: 'domain' };
      if (k === 'stage') return { ...at, status: { title: x }, attribute_type: 'status' };
      if (k === 'value' && object === 'deals')
        return { ...at, currency_value: x, attribute_type: 'currency' };
      if (x && typeof x === 'object') return { ...at, ...(x as V) };
      return { ...at, value: x, attribute_type: 'text' };
    });
  }
  return out;
};
const notFound = (): Answer => ({
  status: 404,
  json: { status_code: 404, type: 'invalid_request_error', code: 'not_found', message: 'Record not found.' },
});

export function attioFake() {
  const store: Record<string, R[]> = { people: [], companies: [], deals: [] };
  const find = (m: RegExpMatchArray) => store[m[1]!]!.find((x) => x.id.record_id === m[2]);
  return startKitFake({
    store,
    authorized: bearer,
    unauthorized: {
      status: 401,
      json: { status_code: 401, type: 'auth_error', code: 'unauthorized', message: 'Invalid token.' },
    },
    notFound,
    routes: [
      [
        'POST',
        /^\/v2\/objects\/(people|companies|deals)\/records\/query$/,
        (r: Req, m) => {
          const { limit = 500, offset = 0 } = r.json<{ limit?: number; offset?: number }>();
          return { json: { data: store[m[1]!]!.slice(offset, offset + limit) } };
        },
      ],
      [
        'POST',
        /^\/v2\/objects\/(people|companies|deals)\/records$/,
        (r, m) => {
          const values = r.json<{ data: { values: V } }>().data.values;
          if (m[1] === 'deals' && !values.stage)
            return {
              status: 400,
              json: {
                status_code: 400,
                type: 'invalid_request_error',
                code: 'validation_type',
                message: 'Missing value for required attribute "stage".',
              },
            };
          const rec: R = {
            id: {
              workspace_id: 'ws1',
              object_id: m[1]!,
              record_id: `00000000-0000-4000-8000-${nextId().padStart(12, '0')}`,
            },
            created_at: nowIso(),
            values: wrap(m[1]!, values),
          };
          store[m[1]!]!.push(rec);
          return { json: { data: rec } };
        },
      ],
      [
        'GET',
        /^\/v2\/objects\/(people|companies|deals)\/records\/([\w-]+)$/,
        (_r, m) => {
          const rec = find(m);
          return rec ? { json: { data: rec } } : notFound();
        },
      ],
      [
        'PATCH',
        /^\/v2\/objects\/(people|companies|deals)\/records\/([\w-]+)$/,
        (r, m) => {
          const rec = find(m);
          if (!rec) return notFound();
          Object.assign(rec.values, wrap(m[1]!, r.json<{ data: { values: V } }>().data.values));
          return { json: { data: rec } };
        },
      ],
      [
        'DELETE',
        /^\/v2\/objects\/(people|companies|deals)\/records\/([\w-]+)$/,
        (_r, m) => {
          const rec = find(m);
          if (!rec) return notFound();
          store[m[1]!]!.splice(store[m[1]!]!.indexOf(rec), 1);
          return { json: {} };
        },
      ],
    ],
  });
}

export const attioCase: UnifiedCase = {
  slug: 'attio',
  category: 'crm',
  start: attioFake,
  env: (url) => ({ INTEGRATIONS_ATTIO_API_URL: `${url}/v2` }),
};
