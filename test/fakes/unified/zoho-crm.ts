import type { UnifiedCase } from '../../unified-scenarios.ts';
import { type Answer, nextId, nowIso, type Req, SECRET, startKitFake } from './kit.ts';

// Zoho CRM v6 as its reference describes it (https://www.zoho.com/crm/developer/docs/api/v6/): modules
// under /crm/v6/{Module}; a list GET must name `fields` (REQUIRED_PARAM_MISSING otherwise), pages with
// page/per_page and says `info.more_records`; an empty list or a missing record is 204 with no body; writes
// take `{ data: [...] }` and answer per record; Last_Name (Contacts), Account_Name, Deal_Name and Stage are
// mandatory. The token goes as `Zoho-oauthtoken`.

type Rec = Record<string, unknown> & { id: string };
const MANDATORY: Record<string, string[]> = {
  Contacts: ['Last_Name'],
  Accounts: ['Account_Name'],
  Deals: ['Deal_Name', 'Stage'],
};
const err = (
  status: number,
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): Answer => ({
  status,
  json: { data: [{ code, details, message, status: 'error' }] },
});

export function zohoCrmFake() {
  const store: Record<string, Rec[]> = { Contacts: [], Accounts: [], Deals: [] };
  const result = (status: number, code: string, message: string, r: Rec): Answer => ({
    status,
    json: {
      data: [
        {
          code,
          message,
          status: 'success',
          details: { id: r.id, Created_Time: r.Created_Time, Modified_Time: r.Modified_Time },
        },
      ],
    },
  });
  return startKitFake({
    store,
    authorized: (r: Req) => r.headers.authorization === `Zoho-oauthtoken ${SECRET}`,
    unauthorized: {
      status: 401,
      json: { code: 'INVALID_TOKEN', details: {}, message: 'invalid oauth token', status: 'error' },
    },
    notFound: () => ({
      status: 404,
      json: {
        code: 'INVALID_URL_PATTERN',
        message: 'Please check if the URL trying to access is a correct one',
        status: 'error',
        details: {},
      },
    }),
    routes: [
      [
        'GET',
        /^\/crm\/v6\/(Contacts|Accounts|Deals)$/,
        (r, m) => {
          const fields = r.url.searchParams.get('fields');
          if (!fields)
            return err(400, 'REQUIRED_PARAM_MISSING', 'One of the expected parameter is missing', {
              param: 'fields',
            });
          const page = Number(r.url.searchParams.get('page') ?? 1);
          const per = Number(r.url.searchParams.get('per_page') ?? 200);
          const all = store[m[1]!]!;
          const slice = all.slice((page - 1) * per, page * per);
          if (!slice.length) return { status: 204 };
          const keep = ['id', ...fields.split(',')];
          return {
            json: {
              data: slice.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => keep.includes(k)))),
              info: { per_page: per, count: slice.length, page, more_records: page * per < all.length },
            },
          };
        },
      ],
      [
        'GET',
        /^\/crm\/v6\/(Contacts|Accounts|Deals)\/(\w+)$/,
        (_r, m) => {
          const rec = store[m[1]!]!.find((x) => x.id === m[2]);
          return rec ? { json: { data: [rec] } } : { status: 204 };
        },
      ],
      [
        'POST',
        /^\/crm\/v6\/(Contacts|Accounts|Deals)$/,
        (r, m) => {
          const input = r.json<{ data: Record<string, unknown>[] }>().data?.[0] ?? {};
          for (const f of MANDATORY[m[1]!]!)
            if (!input[f])
              return err(400, 'MANDATORY_NOT_FOUND', 'required field not found', { api_name: f });
          const rec: Rec = {
            ...input,
            id: `4876876${nextId()}`,
            Created_Time: nowIso(),
            Modified_Time: nowIso(),
          };
          if (m[1] === 'Deals' && typeof rec.Amount !== 'number') delete rec.Amount;
          store[m[1]!]!.push(rec);
          return result(201, 'SUCCESS', 'record added', rec);
        },
      ],
      [
        'PUT',
        /^\/crm\/v6\/(Contacts|Accounts|Deals)\/(\w+)$/,
        (r, m) => {
          const rec = store[m[1]!]!.find((x) => x.id === m[2]);
          if (!rec)
            return err(400, 'INVALID_DATA', 'the related id given seems to be invalid', { api_name: 'id' });
          Object.assign(rec, r.json<{ data: Record<string, unknown>[] }>().data?.[0], {
            Modified_Time: nowIso(),
          });
          return result(200, 'SUCCESS', 'record updated', rec);
        },
      ],
      [
        'DELETE',
        /^\/crm\/v6\/(Contacts|Accounts|Deals)\/(\w+)$/,
        (_r, m) => {
          const list = store[m[1]!]!;
          const i = list.findIndex((x) => x.id === m[2]);
          if (i < 0)
            return err(400, 'INVALID_DATA', 'the related id given seems to be invalid', { api_name: 'id' });
          const [rec] = list.splice(i, 1);
          return result(200, 'SUCCESS', 'record deleted', rec!);
        },
      ],
    ],
  });
}

export const zohoCrmCase: UnifiedCase = {
  slug: 'zoho-crm',
  category: 'crm',
  start: zohoCrmFake,
  env: (url) => ({ INTEGRATIONS_ZOHO_CRM_API_URL: `${url}/crm/v6` }),
};
