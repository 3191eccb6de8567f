import crypto from 'node:crypto';
import {
  type ConnectorCode,
  type FileItem,
  type Folder,
  iso,
  messageAt,
  type ProviderCall,
} from './types.ts';

// Google Drive v3 (https://developers.google.com/drive/api/reference/rest/v3): files and folders are both
// `files` (folders have the folder MIME type), listed with a `q` filter and paged by `pageToken` /
// `nextPageToken`; uploads are multipart/related on /upload/drive/v3/files. OAuth with PKCE; offline
// access gives a refresh token. Errors: `{ error: { code, message, status } }`.

const FOLDER = 'application/vnd.google-apps.folder';
const FIELDS = 'id,name,mimeType,size,parents,createdTime,modifiedTime';

type GFile = {
  id: string;
  name: string;
  mimeType?: string;
  size?: string;
  parents?: string[];
  createdTime?: string;
  modifiedTime?: string;
};

const file = (f: GFile): FileItem => ({
  id: f.id,
  name: f.name,
  mimeType: f.mimeType ?? null,
  size: f.size === undefined ? null : Number(f.size),
  folderId: f.parents?.[0] ?? null,
  createdAt: iso(f.createdTime),
  updatedAt: iso(f.modifiedTime),
  rawData: f as unknown as Record<string, unknown>,
});

const folder = (f: GFile): Folder => ({
  id: f.id,
  name: f.name,
  parentId: f.parents?.[0] ?? null,
  createdAt: iso(f.createdTime),
  rawData: f as unknown as Record<string, unknown>,
});

// Drive query strings quote with '…' and escape \ and '.
const quote = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

async function list(call: ProviderCall, q: string, a: { cursor?: string; limit: number }) {
  const res = await call({
    method: 'GET',
    path: '/drive/v3/files',
    query: { q, pageSize: a.limit, pageToken: a.cursor, fields: `nextPageToken,files(${FIELDS})` },
  });
  return res.json<{ files: GFile[]; nextPageToken?: string }>();
}

export const googleDrive: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'error.message', 'error_description', 'error'),
  async account(call) {
    const b = (await call({ method: 'GET', path: '/drive/v3/about', query: { fields: 'user' } })).json<{
      user?: { permissionId?: string; emailAddress?: string; displayName?: string };
    }>();
    return { id: b.user?.permissionId ?? '', name: b.user?.emailAddress ?? b.user?.displayName ?? null };
  },
  storage: {
    async listFiles(call, a) {
      const b = await list(
        call,
        `${quote(a.folderId ?? 'root')} in parents and trashed = false and mimeType != '${FOLDER}'`,
        a,
      );
      return { items: b.files.map(file), next: b.nextPageToken ?? null };
    },
    async uploadFile(call, input) {
      const boundary = `pier-${crypto.randomBytes(12).toString('hex')}`;
      const meta = {
        name: input.name,
        mimeType: input.mimeType,
        ...(input.folderId ? { parents: [input.folderId] } : {}),
      };
      const data = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(meta)}\r\n`,
        ),
        Buffer.from(`--${boundary}\r\nContent-Type: ${input.mimeType}\r\n\r\n`),
        input.data,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const res = await call({
        method: 'POST',
        path: '/upload/drive/v3/files',
        query: { uploadType: 'multipart', fields: FIELDS },
        raw: { data, contentType: `multipart/related; boundary=${boundary}` },
      });
      return file(res.json<GFile>());
    },
    async downloadFile(call, id) {
      const path = `/drive/v3/files/${encodeURIComponent(id)}`;
      const meta = (await call({ method: 'GET', path, query: { fields: 'id,name,mimeType' } })).json<GFile>();
      const res = await call({ method: 'GET', path, query: { alt: 'media' }, headers: { accept: '*/*' } });
      return { data: res.body, mimeType: meta.mimeType ?? 'application/octet-stream', filename: meta.name };
    },
    async openFile(call, id) {
      const path = `/drive/v3/files/${encodeURIComponent(id)}`;
      const meta = (
        await call({ method: 'GET', path, query: { fields: 'id,name,mimeType,size' } })
      ).json<GFile>();
      const res = await call({
        method: 'GET',
        path,
        query: { alt: 'media' },
        headers: { accept: '*/*' },
        stream: true,
      });
      return {
        stream: res.stream!,
        mimeType: meta.mimeType ?? 'application/octet-stream',
        filename: meta.name,
        size: meta.size === undefined ? null : Number(meta.size),
      };
    },
    async deleteFile(call, id) {
      await call({ method: 'DELETE', path: `/drive/v3/files/${encodeURIComponent(id)}` });
    },
    async listFolders(call, a) {
      const b = await list(
        call,
        `${quote(a.parentId ?? 'root')} in parents and trashed = false and mimeType = '${FOLDER}'`,
        a,
      );
      return { items: b.files.map(folder), next: b.nextPageToken ?? null };
    },
    async createFolder(call, input) {
      const res = await call({
        method: 'POST',
        path: '/drive/v3/files',
        query: { fields: FIELDS },
        json: {
          name: input.name,
          mimeType: FOLDER,
          ...(input.parentId ? { parents: [input.parentId] } : {}),
        },
      });
      return folder(res.json<GFile>());
    },
  },
};
