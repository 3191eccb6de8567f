import crypto from 'node:crypto';
import { type ApiAnswer, type FakeProvider, slice, startOAuthProvider } from './oauth-provider.ts';

// Local fakes of the integration providers, speaking each one's wire format for the OAuth token endpoint
// and the API subset the connectors use: HubSpot CRM v3, Slack Web API, Google Drive v3, Notion 2022-06-28.

export type Fake<S> = FakeProvider & { store: S };
const id = () => crypto.randomBytes(6).toString('hex');
const now = () => new Date().toISOString();

// ---------------------------------------------------------------- HubSpot
type HsObj = {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
};
export async function startHubspot(): Promise<
  Fake<{ contacts: HsObj[]; companies: HsObj[]; deals: HsObj[] }>
> {
  const store = { contacts: [] as HsObj[], companies: [] as HsObj[], deals: [] as HsObj[] };
  const notFound: ApiAnswer = {
    status: 404,
    json: {
      status: 'error',
      message: 'Object not found.  objectId are usually numeric.',
      category: 'OBJECT_NOT_FOUND',
      correlationId: id(),
    },
  };
  const p = await startOAuthProvider({
    clientId: 'hs-client',
    clientSecret: 'hs-secret',
    clientAuth: 'body',
    tokenBody: 'form',
    tokenPath: '/oauth/v1/token',
    expiresInSec: 1800,
    tokenError: (error) => ({
      status: 400,
      json: {
        status: 'BAD_REFRESH_TOKEN',
        message: 'missing or unknown refresh token',
        error,
        error_description: 'refresh token is invalid',
      },
    }),
    unauthorized: () => ({
      status: 401,
      json: {
        status: 'error',
        message: 'Authentication credentials not found.',
        category: 'INVALID_AUTHENTICATION',
        correlationId: id(),
      },
    }),
    api(req) {
      const path = req.url.pathname;
      if (path.startsWith('/oauth/v1/access-tokens/')) {
        return {
          json: {
            token: req.token,
            hub_id: 4242,
            hub_domain: 'acme.hubspot.com',
            user: 'owner@acme.test',
            token_type: 'access',
          },
        };
      }
      if (path.startsWith('/oauth/v1/refresh-tokens/') && req.method === 'DELETE') return { status: 204 };
      const m = path.match(/^\/crm\/v3\/objects\/(contacts|companies|deals)(?:\/([^/]+))?$/);
      if (!m) return notFound;
      const list = store[m[1] as keyof typeof store];
      const objId = m[2];
      if (!objId && req.method === 'GET') {
        const after = Number(req.url.searchParams.get('after') ?? 0);
        const limit = Number(req.url.searchParams.get('limit') ?? 10);
        if (limit > 100)
          return {
            status: 400,
            json: { status: 'error', message: 'limit must be at most 100', category: 'VALIDATION_ERROR' },
          };
        const { page, next } = slice(list, after, limit);
        return {
          json: {
            results: page,
            ...(next !== null ? { paging: { next: { after: String(next), link: `?after=${next}` } } } : {}),
          },
        };
      }
      if (!objId && req.method === 'POST') {
        const props = (req.json().properties ?? {}) as Record<string, string>;
        if (m[1] === 'contacts' && props.email && list.some((o) => o.properties.email === props.email)) {
          return {
            status: 409,
            json: {
              status: 'error',
              message: `Contact already exists. Existing ID: ${list.find((o) => o.properties.email === props.email)!.id}`,
              category: 'CONFLICT',
            },
          };
        }
        const o: HsObj = {
          id: String(1000 + list.length + 1),
          properties: props,
          createdAt: now(),
          updatedAt: now(),
          archived: false,
        };
        list.push(o);
        return { status: 201, json: o };
      }
      const o = list.find((x) => x.id === objId);
      if (!o) return notFound;
      if (req.method === 'GET') return { json: o };
      if (req.method === 'PATCH') {
        Object.assign(o.properties, (req.json().properties ?? {}) as Record<string, string>);
        o.updatedAt = now();
        return { json: o };
      }
      if (req.method === 'DELETE') {
        list.splice(list.indexOf(o), 1);
        return { status: 204 };
      }
      return notFound;
    },
  });
  return Object.assign(p, { store });
}

// ---------------------------------------------------------------- Slack
type SlackMsg = { type: 'message'; user: string; text: string; ts: string };
export async function startSlack(): Promise<
  Fake<{
    channels: { id: string; name: string; is_private: boolean; num_members: number }[];
    messages: Map<string, SlackMsg[]>;
    users: Record<string, unknown>[];
  }>
> {
  const store = {
    channels: [] as { id: string; name: string; is_private: boolean; num_members: number }[],
    messages: new Map<string, SlackMsg[]>(),
    users: [] as Record<string, unknown>[],
  };
  const page = <T>(items: T[], u: URL) => {
    const { page: part, next } = slice(
      items,
      Number(Buffer.from(u.searchParams.get('cursor') ?? '', 'base64').toString() || 0),
      Number(u.searchParams.get('limit') ?? 100),
    );
    return { part, meta: { next_cursor: next === null ? '' : Buffer.from(String(next)).toString('base64') } };
  };
  const p = await startOAuthProvider({
    clientId: 'slack-client',
    clientSecret: 'slack-secret',
    clientAuth: 'body',
    tokenBody: 'form',
    tokenPath: '/api/oauth.v2.access',
    expiresInSec: 43_200,
    tokenExtra: {
      ok: true,
      token_type: 'bot',
      scope: 'channels:read,chat:write',
      bot_user_id: 'UBOT',
      app_id: 'A1',
      team: { id: 'T0001', name: 'Acme Workspace' },
    },
    tokenError: (error) => ({
      json: { ok: false, error: error === 'invalid_grant' ? 'invalid_refresh_token' : error },
    }),
    // Slack answers HTTP 200 with ok: false.
    unauthorized: () => ({ json: { ok: false, error: 'token_expired' } }),
    api(req) {
      const path = req.url.pathname.replace(/^\/api/, '');
      const params =
        req.method === 'POST' && req.headers['content-type']?.includes('json')
          ? (req.json() as Record<string, string>)
          : Object.fromEntries(req.url.searchParams);
      switch (path) {
        case '/auth.test':
          return { json: { ok: true, team: 'Acme Workspace', team_id: 'T0001', user_id: 'UBOT' } };
        case '/auth.revoke':
          return { json: { ok: true, revoked: true } };
        case '/conversations.list': {
          const { part, meta } = page(store.channels, req.url);
          return { json: { ok: true, channels: part, response_metadata: meta } };
        }
        case '/conversations.history': {
          const msgs = store.messages.get(params.channel ?? '');
          if (!msgs) return { json: { ok: false, error: 'channel_not_found' } };
          const { part, meta } = page([...msgs].reverse(), req.url);
          return {
            json: { ok: true, messages: part, has_more: meta.next_cursor !== '', response_metadata: meta },
          };
        }
        case '/chat.postMessage': {
          const msgs = store.messages.get(params.channel ?? '');
          if (!msgs) return { json: { ok: false, error: 'channel_not_found' } };
          const m: SlackMsg = {
            type: 'message',
            user: 'UBOT',
            text: params.text ?? '',
            // Slack's form: seconds, a dot and six digits, unique per channel.
            ts: `${Math.floor(Date.now() / 1000)}.${String(msgs.length).padStart(6, '0')}`,
          };
          msgs.push(m);
          return { json: { ok: true, channel: params.channel, ts: m.ts, message: m } };
        }
        case '/users.list': {
          const { part, meta } = page(store.users, req.url);
          return { json: { ok: true, members: part, response_metadata: meta } };
        }
        default:
          return { json: { ok: false, error: 'unknown_method' } };
      }
    },
  });
  return Object.assign(p, { store });
}

// ---------------------------------------------------------------- Google Drive
type GFile = {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  createdTime: string;
  modifiedTime: string;
  size?: string;
  content?: Buffer;
  /** A large file's bytes, written by the fake at its own pace instead of held in `content`. */
  write?: (res: import('node:http').ServerResponse) => Promise<void>;
};
export async function startGoogleDrive(): Promise<Fake<{ files: GFile[] }>> {
  const store = { files: [] as GFile[] };
  const gError = (code: number, status: string, message: string): ApiAnswer => ({
    status: code,
    json: { error: { code, message, status, errors: [{ message, reason: status }] } },
  });
  const meta = ({ content: _c, write: _w, ...f }: GFile) => f;
  const p = await startOAuthProvider({
    clientId: 'g-client',
    clientSecret: 'g-secret',
    clientAuth: 'body',
    tokenBody: 'form',
    tokenPath: '/token',
    expiresInSec: 3599,
    tokenExtra: { scope: 'https://www.googleapis.com/auth/drive', token_type: 'Bearer' },
    tokenError: (error) => ({
      status: 400,
      json: {
        error,
        error_description: error === 'invalid_grant' ? 'Token has been expired or revoked.' : 'Bad Request',
      },
    }),
    unauthorized: () => gError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.'),
    api(req) {
      const path = req.url.pathname;
      if (path === '/drive/v3/about')
        return {
          json: { user: { displayName: 'Ada', emailAddress: 'ada@acme.test', permissionId: '0123perm' } },
        };
      if (path === '/drive/v3/files' && req.method === 'GET') {
        const q = req.url.searchParams.get('q') ?? '';
        const parent = q.match(/^'((?:[^'\\]|\\.)*)' in parents/)?.[1] ?? 'root';
        const folders = q.includes("mimeType = 'application/vnd.google-apps.folder'");
        const items = store.files.filter(
          (f) =>
            f.parents.includes(parent) && (f.mimeType === 'application/vnd.google-apps.folder') === folders,
        );
        const token = Number(req.url.searchParams.get('pageToken') ?? 0);
        const { page, next } = slice(items, token, Number(req.url.searchParams.get('pageSize') ?? 100));
        return { json: { files: page.map(meta), ...(next !== null ? { nextPageToken: String(next) } : {}) } };
      }
      if (path === '/drive/v3/files' && req.method === 'POST') {
        const b = req.json() as { name: string; mimeType: string; parents?: string[] };
        const f: GFile = {
          id: `f${id()}`,
          name: b.name,
          mimeType: b.mimeType,
          parents: b.parents ?? ['root'],
          createdTime: now(),
          modifiedTime: now(),
        };
        store.files.push(f);
        return { json: meta(f) };
      }
      if (path === '/upload/drive/v3/files' && req.method === 'POST') {
        if (req.url.searchParams.get('uploadType') !== 'multipart')
          return gError(400, 'INVALID_ARGUMENT', 'uploadType');
        const boundary = String(req.headers['content-type']).match(/boundary=(.+)$/)?.[1];
        const parts = req.raw.toString('latin1').split(`--${boundary}`);
        const metaPart = JSON.parse(parts[1]!.split('\r\n\r\n')[1]!.trim());
        const media = parts[2]!.slice(parts[2]!.indexOf('\r\n\r\n') + 4, -2);
        const content = Buffer.from(media, 'latin1');
        const f: GFile = {
          id: `f${id()}`,
          name: metaPart.name,
          mimeType: metaPart.mimeType,
          parents: metaPart.parents ?? ['root'],
          createdTime: now(),
          modifiedTime: now(),
          size: String(content.length),
          content,
        };
        store.files.push(f);
        return { json: meta(f) };
      }
      const m = path.match(/^\/drive\/v3\/files\/([^/]+)$/);
      const f = m ? store.files.find((x) => x.id === m[1]) : undefined;
      if (!f) return gError(404, 'NOT_FOUND', `File not found: ${m?.[1] ?? ''}.`);
      if (req.method === 'DELETE') {
        store.files.splice(store.files.indexOf(f), 1);
        return { status: 204 };
      }
      if (req.url.searchParams.get('alt') === 'media' && f.write)
        return { write: f.write, headers: { 'content-type': f.mimeType } };
      if (req.url.searchParams.get('alt') === 'media')
        return { body: f.content ?? Buffer.alloc(0), headers: { 'content-type': f.mimeType } };
      return { json: meta(f) };
    },
  });
  return Object.assign(p, { store });
}

// ---------------------------------------------------------------- Notion
type NPage = Record<string, unknown> & { id: string };
export async function startNotion(): Promise<
  Fake<{ pages: NPage[]; databases: NPage[]; rows: Map<string, NPage[]> }>
> {
  const store = { pages: [] as NPage[], databases: [] as NPage[], rows: new Map<string, NPage[]>() };
  const nError = (status: number, code: string, message: string): ApiAnswer => ({
    status,
    json: { object: 'error', status, code, message },
  });
  const list = (items: NPage[], b: Record<string, unknown>) => {
    const { page, next } = slice(items, Number(b.start_cursor ?? 0), Number(b.page_size ?? 100));
    return {
      json: {
        object: 'list',
        results: page,
        next_cursor: next === null ? null : String(next),
        has_more: next !== null,
        type: 'page_or_database',
      },
    };
  };
  const p = await startOAuthProvider({
    clientId: 'notion-client',
    clientSecret: 'notion-secret',
    clientAuth: 'basic',
    tokenBody: 'json',
    tokenPath: '/v1/oauth/token',
    tokenExtra: {
      bot_id: 'bot-1',
      workspace_id: 'ws-1',
      workspace_name: 'Acme Notes',
      workspace_icon: null,
      owner: { type: 'user' },
    },
    tokenError: (error) => ({ status: 400, json: { error, error_description: 'Invalid code.' } }),
    unauthorized: () => nError(401, 'unauthorized', 'API token is invalid.'),
    api(req) {
      if (req.headers['notion-version'] !== '2022-06-28')
        return nError(400, 'missing_version', 'Notion-Version header failed validation.');
      const path = req.url.pathname.replace(/^\/v1/, '');
      if (path === '/users/me')
        return { json: { object: 'user', id: 'bot-1', type: 'bot', bot: { workspace_name: 'Acme Notes' } } };
      if (path === '/search') {
        const b = req.json();
        const kind = (b.filter as { value?: string } | undefined)?.value;
        return list(kind === 'database' ? store.databases : store.pages, b);
      }
      const q = path.match(/^\/databases\/([^/]+)(\/query)?$/);
      if (q) {
        const db = store.databases.find((d) => d.id === q[1]);
        if (!db) return nError(404, 'object_not_found', `Could not find database with ID: ${q[1]}.`);
        return q[2] ? list(store.rows.get(db.id) ?? [], req.json()) : { json: db };
      }
      if (path === '/pages' && req.method === 'POST') {
        const b = req.json() as { parent: { database_id?: string }; properties: Record<string, unknown> };
        const page: NPage = {
          object: 'page',
          id: `p-${id()}`,
          created_time: now(),
          last_edited_time: now(),
          url: `https://www.notion.so/p-${id()}`,
          parent: b.parent,
          properties: {},
        };
        const props: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(b.properties)) {
          const type = Object.keys(v as object)[0]!;
          const val = (v as Record<string, unknown>)[type];
          props[k] = {
            id: k,
            type,
            [type]: Array.isArray(val)
              ? val.map((t: { text?: { content?: string } }) => ({ ...t, plain_text: t.text?.content }))
              : val,
          };
        }
        page.properties = props;
        if (b.parent.database_id) {
          const rows = store.rows.get(b.parent.database_id);
          if (!rows) return nError(404, 'object_not_found', 'Could not find database.');
          rows.push(page);
        } else store.pages.push(page);
        return { json: page };
      }
      return nError(404, 'object_not_found', 'Not found.');
    },
  });
  return Object.assign(p, { store });
}
