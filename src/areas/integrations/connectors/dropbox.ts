import {
  type ConnectorCode,
  type FileItem,
  type Folder,
  iso,
  type ProviderCall,
  type ProviderResponse,
  str,
} from './types.ts';

// Dropbox API v2 (https://www.dropbox.com/developers/documentation/http/documentation): RPC endpoints are
// POSTs with JSON on api.dropboxapi.com/2; uploads and downloads go to content.dropboxapi.com/2 with their
// arguments in the `Dropbox-API-Arg` header. Folders list with `list_folder` + `list_folder/continue`
// (`cursor`, `has_more`). Ids look like `id:…`, and `id:…/name` addresses a child. Route errors are 409
// `{ error_summary: 'path/not_found/…', error }`; an expired token is 401 `expired_access_token`.
// Dropbox keeps no MIME types: they are inferred from the file name.

type Entry = {
  '.tag': 'file' | 'folder' | 'deleted';
  id: string;
  name: string;
  path_lower?: string;
  path_display?: string;
  size?: number;
  client_modified?: string;
  server_modified?: string;
};

const MIME: Record<string, string> = {
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  html: 'text/html',
  md: 'text/markdown',
  zip: 'application/zip',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};
const mimeOf = (name: string) =>
  MIME[name.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';

// The header must be ASCII: everything else is escaped as JSON \u sequences.
const apiArg = (v: unknown) =>
  JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const parentOf = (e: Entry) => {
  const p = e.path_display ?? '';
  const i = p.lastIndexOf('/');
  return i > 0 ? p.slice(0, i) : null;
};

const file = (e: Entry, folderId?: string): FileItem => ({
  id: e.id,
  name: e.name,
  mimeType: mimeOf(e.name),
  size: e.size ?? null,
  folderId: folderId ?? parentOf(e),
  createdAt: iso(e.client_modified),
  updatedAt: iso(e.server_modified),
  rawData: e as unknown as Record<string, unknown>,
});
const folder = (e: Entry, parentId?: string): Folder => ({
  id: e.id,
  name: e.name,
  parentId: parentId ?? parentOf(e),
  createdAt: null,
  rawData: e as unknown as Record<string, unknown>,
});

async function listEntries(call: ProviderCall, path: string, a: { cursor?: string; limit: number }) {
  const res = a.cursor
    ? await call({ method: 'POST', path: '/files/list_folder/continue', json: { cursor: a.cursor } })
    : await call({ method: 'POST', path: '/files/list_folder', json: { path, limit: a.limit } });
  return res.json<{ entries: Entry[]; cursor: string; has_more: boolean }>();
}

function failure(res: ProviderResponse) {
  if (res.status !== 409 && res.status !== 401) return null;
  let summary = '';
  try {
    summary = String(res.json<{ error_summary?: string }>().error_summary ?? '');
  } catch {
    return null;
  }
  if (res.status === 401) return { status: 401, message: summary, authExpired: true };
  if (/not_found/.test(summary)) return { status: 404, message: summary };
  if (/conflict|already_exists/.test(summary)) return { status: 409, message: summary };
  return { status: 400, message: summary };
}

export const dropbox: ConnectorCode = {
  failure,
  errorMessage: (res) => {
    try {
      const b = res.json<{ error_summary?: string; error_description?: string; error?: string }>();
      return b.error_summary ?? b.error_description ?? (typeof b.error === 'string' ? b.error : null);
    } catch {
      return null;
    }
  },
  async account(call) {
    const b = (
      await call({
        method: 'POST',
        path: '/users/get_current_account',
        raw: { data: 'null', contentType: 'application/json' },
      })
    ).json<{
      account_id?: string;
      email?: string;
      name?: { display_name?: string };
    }>();
    return { id: b.account_id ?? '', name: str(b.email) ?? str(b.name?.display_name) };
  },
  async revoke(call) {
    await call({ method: 'POST', path: '/auth/token/revoke' });
  },
  storage: {
    async listFiles(call, a) {
      const b = await listEntries(call, a.folderId ?? '', a);
      return {
        items: b.entries.filter((e) => e['.tag'] === 'file').map((e) => file(e, a.folderId)),
        next: b.has_more ? b.cursor : null,
      };
    },
    async uploadFile(call, input) {
      const path = `${input.folderId ?? ''}/${input.name}`;
      const res = await call({
        method: 'POST',
        path: '/files/upload',
        host: 'content',
        headers: { 'dropbox-api-arg': apiArg({ path, mode: 'add', autorename: true, mute: true }) },
        raw: { data: input.data, contentType: 'application/octet-stream' },
      });
      return { ...file(res.json<Entry>(), input.folderId), mimeType: input.mimeType };
    },
    async downloadFile(call, id) {
      const res = await call({
        method: 'POST',
        path: '/files/download',
        host: 'content',
        headers: { 'dropbox-api-arg': apiArg({ path: id }), accept: '*/*' },
      });
      let name = id;
      try {
        name = (JSON.parse(res.headers.get('dropbox-api-result') ?? '{}') as Entry).name ?? id;
      } catch {}
      return { data: res.body, mimeType: mimeOf(name), filename: name };
    },
    async openFile(call, id) {
      const res = await call({
        method: 'POST',
        path: '/files/download',
        host: 'content',
        headers: { 'dropbox-api-arg': apiArg({ path: id }), accept: '*/*' },
        stream: true,
      });
      let e: Partial<Entry> = {};
      try {
        e = JSON.parse(res.headers.get('dropbox-api-result') ?? '{}') as Entry;
      } catch {}
      const name = e.name ?? id;
      return { stream: res.stream!, mimeType: mimeOf(name), filename: name, size: e.size ?? null };
    },
    async deleteFile(call, id) {
      await call({ method: 'POST', path: '/files/delete_v2', json: { path: id } });
    },
    async listFolders(call, a) {
      const b = await listEntries(call, a.parentId ?? '', a);
      return {
        items: b.entries.filter((e) => e['.tag'] === 'folder').map((e) => folder(e, a.parentId)),
        next: b.has_more ? b.cursor : null,
      };
    },
    async createFolder(call, input) {
      const res = await call({
        method: 'POST',
        path: '/files/create_folder_v2',
        json: { path: `${input.parentId ?? ''}/${input.name}`, autorename: false },
      });
      return folder({ ...res.json<{ metadata: Entry }>().metadata, '.tag': 'folder' }, input.parentId);
    },
  },
};
