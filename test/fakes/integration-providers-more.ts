import crypto from 'node:crypto';
import type { Fake } from './integration-providers.ts';
import { type ApiAnswer, slice, startOAuthProvider } from './oauth-provider.ts';

// Fakes of Salesforce (SOQL keyset queries, sobjects, error arrays), Pipedrive (offset pages with
// additional_data.pagination), Dropbox (RPC + content host, Dropbox-API-Arg, 409 route errors) and Airtable
// (meta bases/tables, records paged by offset).

const hex = () => crypto.randomBytes(6).toString('hex');
const now = () => new Date().toISOString();

// ---------------------------------------------------------------- Salesforce
type SfRec = Record<string, unknown> & { Id: string };
export async function startSalesforce(
  opts: { instanceHost?: boolean } = {},
): Promise<Fake<Record<'Contact' | 'Account' | 'Opportunity', SfRec[]>>> {
  const store = { Contact: [] as SfRec[], Account: [] as SfRec[], Opportunity: [] as SfRec[] };
  const sfError = (status: number, errorCode: string, message: string): ApiAnswer => ({
    status,
    json: [{ message, errorCode, fields: [] }],
  });
  let seq = 0;
  const p = await startOAuthProvider({
    clientId: 'sf-client',
    clientSecret: 'sf-secret',
    clientAuth: 'body',
    tokenBody: 'form',
    tokenPath: '/services/oauth2/token',
    separateApiHost: opts.instanceHost,
    // With `instanceHost` the org's API is on the fake's second server, named by instance_url as Salesforce
    // does (its refresh answers name it again).
    tokenExtra: (_grant, urls) => ({
      instance_url: opts.instanceHost ? urls.apiUrl : 'https://acme.my.salesforce.com',
      id: 'https://login.salesforce.com/id/00D/005',
      issued_at: String(Date.now()),
      signature: 'sig',
    }),
    tokenError: (error) => ({
      status: 400,
      json: {
        error,
        error_description: error === 'invalid_grant' ? 'expired access/refresh token' : 'bad request',
      },
    }),
    unauthorized: () => sfError(401, 'INVALID_SESSION_ID', 'Session expired or invalid'),
    api(req) {
      const path = req.url.pathname;
      if (path === '/services/oauth2/userinfo')
        return { json: { organization_id: '00DACME', preferred_username: 'admin@acme.test', name: 'Admin' } };
      if (path === '/services/data/v60.0/query') {
        const q = req.url.searchParams.get('q') ?? '';
        const m = q.match(/FROM (\w+)(?: WHERE Id > '([^']*)')? ORDER BY Id LIMIT (\d+)$/);
        if (!m) return sfError(400, 'MALFORMED_QUERY', 'unexpected token');
        const all = [...(store[m[1] as keyof typeof store] ?? [])].sort((a, b) => a.Id.localeCompare(b.Id));
        const records = all.filter((r) => !m[2] || r.Id > m[2]).slice(0, Number(m[3]));
        return {
          json: {
            totalSize: records.length,
            done: true,
            records: records.map((r) => ({ attributes: { type: m[1] }, ...r })),
          },
        };
      }
      const m = path.match(/^\/services\/data\/v60\.0\/sobjects\/(Contact|Account|Opportunity)(?:\/(\w+))?$/);
      if (!m) return sfError(404, 'NOT_FOUND', 'The requested resource does not exist');
      const list = store[m[1] as keyof typeof store];
      if (!m[2] && req.method === 'POST') {
        const b = req.json();
        if (m[1] === 'Contact' && !b.LastName)
          return sfError(400, 'REQUIRED_FIELD_MISSING', 'Required fields are missing: [LastName]');
        const rec: SfRec = {
          Id: `003ACME${String(++seq).padStart(11, '0')}`,
          ...b,
          CreatedDate: now(),
          LastModifiedDate: now(),
        };
        list.push(rec);
        return { status: 201, json: { id: rec.Id, success: true, errors: [] } };
      }
      const rec = list.find((r) => r.Id === m[2]);
      if (!rec) return sfError(404, 'NOT_FOUND', 'The requested resource does not exist');
      if (req.method === 'GET') return { json: { attributes: { type: m[1] }, ...rec } };
      if (req.method === 'PATCH') {
        Object.assign(rec, req.json(), { LastModifiedDate: now() });
        return { status: 204 };
      }
      if (req.method === 'DELETE') {
        list.splice(list.indexOf(rec), 1);
        return { status: 204 };
      }
      return sfError(405, 'METHOD_NOT_ALLOWED', 'no');
    },
  });
  return Object.assign(p, { store });
}

// ---------------------------------------------------------------- Pipedrive
type PdRec = Record<string, unknown> & { id: number };
export async function startPipedrive(
  opts: { companyHost?: boolean } = {},
): Promise<Fake<{ persons: PdRec[]; organizations: PdRec[]; deals: PdRec[] }>> {
  const store = { persons: [] as PdRec[], organizations: [] as PdRec[], deals: [] as PdRec[] };
  const pdError = (status: number, error: string): ApiAnswer => ({
    status,
    json: { success: false, error, errorCode: status, error_info: 'Please check developers.pipedrive.com' },
  });
  let seq = 0;
  const stamp = () => now().slice(0, 19).replace('T', ' ');
  const p = await startOAuthProvider({
    clientId: 'pd-client',
    clientSecret: 'pd-secret',
    clientAuth: 'basic',
    tokenBody: 'form',
    tokenPath: '/oauth/token',
    expiresInSec: 3599,
    separateApiHost: opts.companyHost,
    // With `companyHost` the company domain is the fake's second server; only the authorization answer names
    // it, so a refresh must keep it.
    tokenExtra: (grant, urls) => ({
      scope: 'base,deals:full,contacts:full',
      ...(opts.companyHost
        ? grant === 'authorization_code'
          ? { api_domain: urls.apiUrl }
          : {}
        : { api_domain: 'https://acme.pipedrive.com' }),
    }),
    tokenError: (error) => ({ status: 400, json: { error, message: 'Invalid grant' } }),
    unauthorized: () => pdError(401, 'unauthorized access'),
    api(req) {
      const path = req.url.pathname.replace(/^\/api\/v1/, '');
      if (path === '/users/me')
        return {
          json: {
            success: true,
            data: { id: 7, name: 'Owner', company_id: 99, company_name: 'Acme Ltd', company_domain: 'acme' },
          },
        };
      const m = path.match(/^\/(persons|organizations|deals)(?:\/(\d+))?$/);
      if (!m) return pdError(404, 'Unknown method .');
      const list = store[m[1] as keyof typeof store];
      if (!m[2] && req.method === 'GET') {
        const start = Number(req.url.searchParams.get('start') ?? 0);
        const limit = Number(req.url.searchParams.get('limit') ?? 100);
        const { page, next } = slice(list, start, limit);
        return {
          json: {
            success: true,
            data: page.length ? page : null,
            additional_data: {
              pagination: {
                start,
                limit,
                more_items_in_collection: next !== null,
                ...(next !== null ? { next_start: next } : {}),
              },
            },
          },
        };
      }
      if (!m[2] && req.method === 'POST') {
        const b = req.json();
        if (m[1] === 'persons' && !b.name) return pdError(400, 'Name must be given.');
        const rec: PdRec = { id: ++seq, ...b, add_time: stamp(), update_time: stamp() };
        list.push(rec);
        return { status: 201, json: { success: true, data: rec } };
      }
      const rec = list.find((r) => r.id === Number(m[2]));
      if (!rec) return pdError(404, `${m[1].slice(0, -1)} not found`);
      if (req.method === 'GET') return { json: { success: true, data: rec } };
      if (req.method === 'PUT') {
        Object.assign(rec, req.json(), { update_time: stamp() });
        return { json: { success: true, data: rec } };
      }
      if (req.method === 'DELETE') {
        list.splice(list.indexOf(rec), 1);
        return { json: { success: true, data: { id: rec.id } } };
      }
      return pdError(405, 'no');
    },
  });
  return Object.assign(p, { store });
}

// ---------------------------------------------------------------- Dropbox
type DbxEntry = {
  '.tag': 'file' | 'folder';
  id: string;
  name: string;
  path_display: string;
  path_lower: string;
  size?: number;
  content?: Buffer;
  server_modified?: string;
  client_modified?: string;
};
export async function startDropbox(): Promise<Fake<{ entries: DbxEntry[] }>> {
  const store = { entries: [] as DbxEntry[] };
  const routeError = (summary: string): ApiAnswer => ({
    status: 409,
    json: { error_summary: summary, error: { '.tag': summary.split('/')[0] } },
  });
  const cursors = new Map<string, { path: string; offset: number; limit: number }>();
  // `id:xyz/name` and `/a/b` both resolve to a display path.
  const resolve = (path: string): string | null => {
    if (path === '') return '';
    const m = path.match(/^(id:[^/]+)(\/.*)?$/);
    if (m) {
      const e = store.entries.find((x) => x.id === m[1]);
      return e ? `${e.path_display}${m[2] ?? ''}` : null;
    }
    return path;
  };
  const children = (dir: string) =>
    store.entries.filter((e) => e.path_lower.slice(0, e.path_lower.lastIndexOf('/')) === dir.toLowerCase());
  const meta = ({ content: _c, ...e }: DbxEntry) => e;
  const listPage = (c: { path: string; offset: number; limit: number }) => {
    const { page, next } = slice(children(c.path), c.offset, c.limit);
    const cursor = `cur_${hex()}`;
    if (next !== null) cursors.set(cursor, { ...c, offset: next });
    return { json: { entries: page.map(meta), cursor, has_more: next !== null } };
  };
  const p = await startOAuthProvider({
    clientId: 'dbx-client',
    clientSecret: 'dbx-secret',
    clientAuth: 'body',
    tokenBody: 'form',
    tokenPath: '/oauth2/token',
    expiresInSec: 14_400,
    tokenExtra: { account_id: 'dbid:ACME', uid: '12345', scope: 'files.content.read' },
    tokenError: (error) => ({
      status: 400,
      json: { error, error_description: 'refresh token is malformed' },
    }),
    unauthorized: () => ({
      status: 401,
      json: { error_summary: 'expired_access_token/', error: { '.tag': 'expired_access_token' } },
    }),
    api(req) {
      const path = req.url.pathname.replace(/^\/(api|content)\/2/, '');
      const arg = req.headers['dropbox-api-arg'] ? JSON.parse(String(req.headers['dropbox-api-arg'])) : null;
      switch (path) {
        case '/users/get_current_account':
          return { json: { account_id: 'dbid:ACME', email: 'ada@acme.test', name: { display_name: 'Ada' } } };
        case '/auth/token/revoke':
          return { json: null };
        case '/files/list_folder': {
          const b = req.json() as { path: string; limit?: number };
          const dir = resolve(b.path);
          if (dir === null) return routeError('path/not_found/..');
          return listPage({ path: dir, offset: 0, limit: b.limit ?? 100 });
        }
        case '/files/list_folder/continue': {
          const c = cursors.get(String(req.json().cursor));
          if (!c) return routeError('reset/..');
          return listPage(c);
        }
        case '/files/create_folder_v2':
        case '/files/upload': {
          const target = resolve(path === '/files/upload' ? arg.path : String(req.json().path));
          if (target === null) return routeError('path/not_found/');
          const name = target.slice(target.lastIndexOf('/') + 1);
          const e: DbxEntry = {
            '.tag': path === '/files/upload' ? 'file' : 'folder',
            id: `id:${hex()}`,
            name,
            path_display: target,
            path_lower: target.toLowerCase(),
            ...(path === '/files/upload'
              ? { size: req.raw.length, content: req.raw, server_modified: now(), client_modified: now() }
              : {}),
          };
          store.entries.push(e);
          return { json: path === '/files/upload' ? meta(e) : { metadata: meta(e) } };
        }
        case '/files/download': {
          const e = store.entries.find((x) => x.id === arg.path);
          if (!e) return routeError('path/not_found/');
          return {
            body: e.content ?? Buffer.alloc(0),
            headers: {
              'content-type': 'application/octet-stream',
              'dropbox-api-result': JSON.stringify(meta(e)),
            },
          };
        }
        case '/files/delete_v2': {
          const e = store.entries.find((x) => x.id === req.json().path);
          if (!e) return routeError('path_lookup/not_found/');
          store.entries.splice(store.entries.indexOf(e), 1);
          return { json: { metadata: meta(e) } };
        }
        default:
          return {
            status: 400,
            body: `Error in call to API function "${path}": Unknown API function`,
            headers: { 'content-type': 'text/plain' },
          };
      }
    },
  });
  return Object.assign(p, { store });
}

// ---------------------------------------------------------------- Airtable
export async function startAirtable(): Promise<
  Fake<{
    bases: {
      id: string;
      name: string;
      tables: {
        id: string;
        name: string;
        records: { id: string; createdTime: string; fields: Record<string, unknown> }[];
      }[];
    }[];
  }>
> {
  const store = {
    bases: [] as {
      id: string;
      name: string;
      tables: {
        id: string;
        name: string;
        records: { id: string; createdTime: string; fields: Record<string, unknown> }[];
      }[];
    }[],
  };
  const atError = (status: number, type: string, message: string): ApiAnswer => ({
    status,
    json: { error: { type, message } },
  });
  const p = await startOAuthProvider({
    clientId: 'at-client',
    clientSecret: 'at-secret',
    clientAuth: 'basic',
    tokenBody: 'form',
    tokenPath: '/oauth2/v1/token',
    expiresInSec: 3600,
    tokenExtra: { scope: 'data.records:read', refresh_expires_in: 5_184_000 },
    tokenError: (error) => ({ status: 400, json: { error, error_description: 'invalid refresh token' } }),
    unauthorized: () => atError(401, 'AUTHENTICATION_REQUIRED', 'Authentication required'),
    api(req) {
      const path = req.url.pathname.replace(/^\/v0/, '');
      if (path === '/meta/whoami') return { json: { id: 'usrACME', email: 'ada@acme.test', scopes: [] } };
      if (path === '/meta/bases')
        return {
          json: { bases: store.bases.map(({ id, name }) => ({ id, name, permissionLevel: 'create' })) },
        };
      const t = path.match(/^\/meta\/bases\/([^/]+)\/tables$/);
      if (t) {
        const base = store.bases.find((b) => b.id === t[1]);
        return base
          ? {
              json: {
                tables: base.tables.map(({ id, name }) => ({ id, name, primaryFieldId: 'fld1', fields: [] })),
              },
            }
          : atError(404, 'NOT_FOUND', 'Could not find base');
      }
      const r = path.match(/^\/(app\w+)\/(tbl\w+)$/);
      const table = r ? store.bases.find((b) => b.id === r[1])?.tables.find((x) => x.id === r[2]) : undefined;
      if (!table) return { status: 404, json: { error: 'NOT_FOUND' } };
      if (req.method === 'GET') {
        const { page, next } = slice(
          table.records,
          Number(req.url.searchParams.get('offset') ?? 0),
          Number(req.url.searchParams.get('pageSize') ?? 100),
        );
        return { json: { records: page, ...(next !== null ? { offset: String(next) } : {}) } };
      }
      const b = req.json() as { fields: Record<string, unknown> };
      const rec = { id: `rec${hex()}`, createdTime: now(), fields: b.fields };
      table.records.push(rec);
      return { json: rec };
    },
  });
  return Object.assign(p, { store });
}
