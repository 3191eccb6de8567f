import type {
  Channel,
  ConnectorCode,
  Message,
  Page,
  ProviderCall,
  ProviderResponse,
  WorkspaceUser,
} from './types.ts';
import { iso, messageAt, str } from './types.ts';

// Webex REST API v1 (https://developer.webex.com/docs/api/getting-started): rooms are channels (GET /rooms,
// `type` group or direct), messages GET /messages?roomId=… and POST /messages { roomId, text }, people GET
// /people (the whole organization for an admin's token). Lists take `max` and page by a `Link: <…>;
// rel="next"` header whose URL carries the next position; Pier's cursor is that URL's query string, replayed
// on the same path. Errors: `{ message, errors: [ { description } ], trackingId }`.

type Room = { id: string; title?: string; type?: 'group' | 'direct'; isLocked?: boolean; isPublic?: boolean };
type WMessage = {
  id: string;
  roomId: string;
  personId?: string;
  text?: string;
  markdown?: string;
  created?: string;
};
type Person = { id: string; displayName?: string; emails?: string[]; type?: 'person' | 'bot' };

function nextQuery(res: ProviderResponse): string | null {
  const link = res.headers.get('link') ?? '';
  const m = link.match(/<([^>]+)>;\s*rel="next"/);
  return m ? new URL(m[1]!).search.slice(1) : null;
}

async function list<T>(
  call: ProviderCall,
  path: string,
  query: Record<string, string | number>,
  cursor: string | undefined,
  key: (res: ProviderResponse) => T[],
): Promise<Page<T> & { res?: ProviderResponse }> {
  // A cursor replays the next link's own query (it already holds max, roomId and the position).
  const q = cursor ? Object.fromEntries(new URLSearchParams(cursor)) : query;
  const res = await call({ method: 'GET', path, query: q });
  return { items: key(res), next: nextQuery(res) };
}

const message = (m: WMessage): Message => ({
  id: m.id,
  channelId: m.roomId,
  userId: str(m.personId),
  content: m.text ?? m.markdown ?? '',
  createdAt: iso(m.created),
  rawData: m as unknown as Record<string, unknown>,
});

export const webex: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'message', 'errors.0.description'),
  communication: {
    async listChannels(call, a) {
      const p = await list(
        call,
        '/rooms',
        { max: a.limit, sortBy: 'id' },
        a.cursor,
        (res) => res.json<{ items: Room[] }>().items,
      );
      return {
        items: p.items.map(
          (r): Channel => ({
            id: r.id,
            name: r.title ?? '',
            isPrivate: r.type === 'direct' || r.isPublic === false,
            memberCount: null,
            rawData: r as unknown as Record<string, unknown>,
          }),
        ),
        next: p.next,
      };
    },
    async listMessages(call, a) {
      const p = await list(
        call,
        '/messages',
        { roomId: a.channelId, max: a.limit },
        a.cursor,
        (res) => res.json<{ items: WMessage[] }>().items,
      );
      return { items: p.items.map(message), next: p.next };
    },
    async postMessage(call, input) {
      const res = await call({
        method: 'POST',
        path: '/messages',
        json: { roomId: input.channelId, text: input.content },
      });
      return message(res.json<WMessage>());
    },
    async listUsers(call, a) {
      const p = await list(
        call,
        '/people',
        { max: a.limit },
        a.cursor,
        (res) => res.json<{ items: Person[] }>().items,
      );
      return {
        items: p.items.map(
          (u): WorkspaceUser => ({
            id: u.id,
            name: str(u.displayName),
            email: str(u.emails?.[0]),
            isBot: u.type === 'bot',
            rawData: u as unknown as Record<string, unknown>,
          }),
        ),
        next: p.next,
      };
    },
  },
};
