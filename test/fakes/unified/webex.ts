import type { UnifiedCase } from '../../unified-scenarios.ts';
import { bearer, nextId, nowIso, type Req, startKitFake } from './kit.ts';

// Webex v1 as its reference describes it: GET /v1/rooms, /v1/messages?roomId= (required: 400 without it;
// newest first) and /v1/people with `max`, paged by `Link: <…>; rel="next"` URLs carrying an opaque `cursor`;
// POST /v1/messages {roomId, text} answers the message. Bearer tokens; errors `{ message, errors, trackingId }`.

type Room = { id: string; title: string; type: 'group' | 'direct'; isLocked: boolean; created: string };
type Msg = {
  id: string;
  roomId: string;
  personId: string;
  personEmail: string;
  text: string;
  created: string;
};
type Person = { id: string; emails: string[]; displayName: string; type: 'person' | 'bot' };
type Store = { rooms: Room[]; messages: Msg[]; people: Person[] };
const wxError = (status: number, message: string) => ({
  status,
  json: { message, errors: [{ description: message }], trackingId: 'WX_1' },
});

function paged<T>(r: Req, all: T[]) {
  const max = Number(r.url.searchParams.get('max') ?? 100);
  const from = Number(Buffer.from(r.url.searchParams.get('cursor') ?? '', 'base64url').toString() || 0);
  const more = from + max < all.length;
  const next = new URL(`${r.origin}${r.path}`);
  for (const [k, v] of r.url.searchParams) if (k !== 'cursor') next.searchParams.set(k, v);
  next.searchParams.set('cursor', Buffer.from(String(from + max)).toString('base64url'));
  return {
    json: { items: all.slice(from, from + max) },
    headers: more ? { link: `<${next}>; rel="next"` } : undefined,
  };
}

export function webexFake() {
  const store: Store = { rooms: [], messages: [], people: [] };
  return startKitFake({
    store,
    authorized: bearer,
    unauthorized: wxError(
      401,
      'The request requires a valid access token set in the Authorization request header.',
    ),
    notFound: () => wxError(404, 'The requested resource could not be found.'),
    routes: [
      ['GET', /^\/v1\/rooms$/, (r) => paged(r, store.rooms)],
      [
        'GET',
        /^\/v1\/messages$/,
        (r) => {
          const roomId = r.url.searchParams.get('roomId');
          if (!roomId) return wxError(400, 'roomId is required.');
          return paged(r, store.messages.filter((m) => m.roomId === roomId).reverse());
        },
      ],
      [
        'POST',
        /^\/v1\/messages$/,
        (r) => {
          const b = r.json<{ roomId?: string; text?: string }>();
          if (!store.rooms.some((x) => x.id === b.roomId)) return wxError(404, 'Room not found.');
          const m: Msg = {
            id: `Y2lzY29zcGFyazovL3VzL01FU1NBR0Uv${nextId()}`,
            roomId: b.roomId!,
            personId: 'p-me',
            personEmail: 'me@acme.test',
            text: b.text ?? '',
            created: nowIso(),
          };
          store.messages.push(m);
          return { json: m };
        },
      ],
      ['GET', /^\/v1\/people$/, (r) => paged(r, store.people)],
    ],
  });
}

export const webexCase: UnifiedCase = {
  slug: 'webex',
  category: 'communication',
  start: webexFake,
  env: (url) => ({ INTEGRATIONS_WEBEX_API_URL: `${url}/v1` }),
  seed(s) {
    const store = s as Store;
    for (const [i, title, type] of [
      [1, 'Eng', 'group'],
      [2, 'Sales', 'group'],
      [3, 'Ada', 'direct'],
    ] as const)
      store.rooms.push({
        id: `Y2lzY29zcGFyazovL3VzL1JPT00v${i}`,
        title,
        type,
        isLocked: false,
        created: nowIso(),
      });
    for (let i = 1; i <= 3; i++)
      store.people.push({
        id: `p-${i}`,
        emails: [`p${i}@acme.test`],
        displayName: `Person ${i}`,
        type: i === 3 ? 'bot' : 'person',
      });
  },
};
