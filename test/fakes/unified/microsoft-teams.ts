import type { UnifiedCase } from '../../unified-scenarios.ts';
import { bearer, nextId, nowIso, type Req, startKitFake } from './kit.ts';

// Microsoft Teams via Graph v1.0 as its reference describes it: GET /v1.0/me/joinedTeams and
// /v1.0/teams/{id}/channels (unpaged `{ value }`), channel messages with $top ≤ 50 (400 above) and an
// absolute @odata.nextLink with $skiptoken, POST a chatMessage `{ body: { content } }` (201), GET /v1.0/users
// with $top and $select.

type Channel = { id: string; displayName: string; membershipType: 'standard' | 'private' };
type Msg = {
  id: string;
  from: { user: { id: string; displayName: string } };
  body: { contentType: string; content: string };
  createdDateTime: string;
};
type Store = {
  teams: { id: string; displayName: string; channels: Channel[] }[];
  messages: Map<string, Msg[]>;
  users: { id: string; displayName: string; mail: string; userPrincipalName: string }[];
};
const graphError = (status: number, code: string, message: string) => ({
  status,
  json: { error: { code, message } },
});

function paged<T>(r: Req, all: T[], max = 999) {
  const top = Number(r.url.searchParams.get('$top') ?? 100);
  if (top > max) return graphError(400, 'BadRequest', `$top must be at most ${max}`);
  const skip = Number(r.url.searchParams.get('$skiptoken') ?? 0);
  const next =
    skip + top < all.length ? `${r.origin}${r.path}?$top=${top}&$skiptoken=${skip + top}` : undefined;
  return { json: { value: all.slice(skip, skip + top), ...(next ? { '@odata.nextLink': next } : {}) } };
}

export function teamsFake() {
  const store: Store = { teams: [], messages: new Map(), users: [] };
  const chan = (team: string, channel: string) =>
    store.teams.find((t) => t.id === team)?.channels.find((c) => c.id === channel);
  const missing = graphError(404, 'NotFound', 'Resource not found');
  return startKitFake({
    store,
    authorized: bearer,
    unauthorized: graphError(401, 'InvalidAuthenticationToken', 'Access token validation failure.'),
    notFound: () => missing,
    routes: [
      [
        'GET',
        /^\/v1\.0\/me\/joinedTeams$/,
        () => ({ json: { value: store.teams.map(({ id, displayName }) => ({ id, displayName })) } }),
      ],
      [
        'GET',
        /^\/v1\.0\/teams\/([\w-]+)\/channels$/,
        (_r, m) => {
          const t = store.teams.find((x) => x.id === m[1]);
          return t ? { json: { value: t.channels } } : missing;
        },
      ],
      [
        'GET',
        /^\/v1\.0\/teams\/([\w-]+)\/channels\/([^/]+)\/messages$/,
        (r, m) => {
          const c = chan(m[1]!, decodeURIComponent(m[2]!));
          return c ? paged(r, store.messages.get(c.id) ?? [], 50) : missing;
        },
      ],
      [
        'POST',
        /^\/v1\.0\/teams\/([\w-]+)\/channels\/([^/]+)\/messages$/,
        (r, m) => {
          const c = chan(m[1]!, decodeURIComponent(m[2]!));
          if (!c) return missing;
          const b = r.json<{ body?: { content?: string } }>();
          if (!b.body?.content) return graphError(400, 'BadRequest', 'Missing body content');
          const msg: Msg = {
            id: String(Date.now() + Number(nextId())),
            from: { user: { id: 'u-me', displayName: 'Me' } },
            body: { contentType: 'text', content: b.body.content },
            createdDateTime: nowIso(),
          };
          store.messages.set(c.id, [...(store.messages.get(c.id) ?? []), msg]);
          return { status: 201, json: msg };
        },
      ],
      ['GET', /^\/v1\.0\/users$/, (r) => paged(r, store.users)],
    ],
  });
}

export const teamsCase: UnifiedCase = {
  slug: 'microsoft-teams',
  category: 'communication',
  start: teamsFake,
  env: (url) => ({ INTEGRATIONS_MICROSOFT_TEAMS_API_URL: `${url}/v1.0` }),
  seed(s) {
    const store = s as Store;
    store.teams.push(
      {
        id: 'team-1',
        displayName: 'Eng',
        channels: [
          { id: '19:general@thread.tacv2', displayName: 'General', membershipType: 'standard' },
          { id: '19:random@thread.tacv2', displayName: 'Random', membershipType: 'standard' },
          { id: '19:secret@thread.tacv2', displayName: 'Secret', membershipType: 'private' },
        ],
      },
      {
        id: 'team-2',
        displayName: 'Sales',
        channels: [{ id: '19:deals@thread.tacv2', displayName: 'Deals', membershipType: 'standard' }],
      },
    );
    for (let i = 1; i <= 3; i++)
      store.users.push({
        id: `u-${i}`,
        displayName: `User ${i}`,
        mail: `u${i}@acme.test`,
        userPrincipalName: `u${i}@acme.onmicrosoft.com`,
      });
  },
};
