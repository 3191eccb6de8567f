import type { UnifiedCase } from '../../unified-scenarios.ts';
import { bearer, nextId, nowIso, type Req, startKitFake } from './kit.ts';

// Capsule CRM v2 as its reference describes it: /api/v2/parties (people and organisations together) and
// /api/v2/opportunities, paged by page/perPage with a `Link: <…>; rel="next"` header; `{ party }` /
// `{ parties }` wrappers; a person needs a first or last name, an organisation a name (422 otherwise);
// DELETE 204; 404 `{ message: 'could not find …' }`. Bearer tokens.

type P = Record<string, unknown> & { id: number };

function paged(r: Req, key: string, all: P[]) {
  const page = Number(r.url.searchParams.get('page') ?? 1);
  const per = Number(r.url.searchParams.get('perPage') ?? 50);
  const more = page * per < all.length;
  return {
    json: { [key]: all.slice((page - 1) * per, page * per) },
    headers: more
      ? { link: `<${r.origin}${r.path}?page=${page + 1}&perPage=${per}>; rel="next"` }
      : undefined,
  };
}

export function capsuleFake() {
  const store = { parties: [] as P[], opportunities: [] as P[] };
  const missing = { status: 404, json: { message: 'could not find party' } };
  const find = (id: string) => store.parties.find((p) => String(p.id) === id);
  const withIds = (v: unknown) =>
    Array.isArray(v) ? v.map((x) => ({ id: Number(nextId()), ...(x as object) })) : v;
  return startKitFake({
    store,
    authorized: bearer,
    unauthorized: { status: 401, json: { message: 'authentication failed' } },
    notFound: () => missing,
    routes: [
      ['GET', /^\/api\/v2\/parties$/, (r) => paged(r, 'parties', store.parties)],
      [
        'POST',
        /^\/api\/v2\/parties$/,
        (r) => {
          const b = r.json<{ party: Record<string, unknown> }>().party;
          if (b.type === 'person' ? !b.firstName && !b.lastName : !b.name)
            return {
              status: 422,
              json: {
                message: 'validation failed',
                errors: [{ message: 'name is required', resource: 'party', field: 'name' }],
              },
            };
          const p: P = {
            ...b,
            id: Number(nextId()),
            emailAddresses: withIds(b.emailAddresses ?? []),
            phoneNumbers: withIds(b.phoneNumbers ?? []),
            websites: withIds(b.websites ?? []),
            createdAt: nowIso(),
            updatedAt: nowIso(),
          };
          store.parties.push(p);
          return { status: 201, json: { party: p } };
        },
      ],
      [
        'GET',
        /^\/api\/v2\/parties\/(\d+)$/,
        (_r, m) => {
          const p = find(m[1]!);
          return p ? { json: { party: p } } : missing;
        },
      ],
      [
        'PUT',
        /^\/api\/v2\/parties\/(\d+)$/,
        (r, m) => {
          const p = find(m[1]!);
          if (!p) return missing;
          const b = r.json<{ party: Record<string, unknown> }>().party;
          for (const [k, v] of Object.entries(b)) {
            if (!Array.isArray(v)) {
              p[k] = v;
              continue;
            }
            // Lists: an entry with an id changes that entry, one without is added.
            const list = [...((p[k] as P[]) ?? [])];
            for (const x of v as P[]) {
              const i = list.findIndex((y) => y.id === x.id);
              if (x.id !== undefined && i >= 0) list[i] = { ...list[i]!, ...x };
              else list.push({ ...x, id: Number(nextId()) });
            }
            p[k] = list;
          }
          p.updatedAt = nowIso();
          return { json: { party: p } };
        },
      ],
      [
        'DELETE',
        /^\/api\/v2\/parties\/(\d+)$/,
        (_r, m) => {
          const p = find(m[1]!);
          if (!p) return missing;
          store.parties.splice(store.parties.indexOf(p), 1);
          return { status: 204 };
        },
      ],
      ['GET', /^\/api\/v2\/opportunities$/, (r) => paged(r, 'opportunities', store.opportunities)],
    ],
  });
}

export const capsuleCase: UnifiedCase = {
  slug: 'capsule',
  category: 'crm',
  start: capsuleFake,
  env: (url) => ({ INTEGRATIONS_CAPSULE_API_URL: `${url}/api/v2` }),
  without: ['createDeal'],
  seed(s) {
    const store = s as { opportunities: P[] };
    for (const [id, name, amount] of [
      [71, 'Big deal', 1200],
      [72, 'Pilot', 90],
      [73, 'Support', 40],
    ] as const)
      store.opportunities.push({
        id,
        name,
        value: { amount, currency: 'GBP' },
        milestone: { id: 1, name: 'New' },
        party: { id: 1 },
        createdAt: nowIso(),
        updatedAt: nowIso(),
      });
  },
};
