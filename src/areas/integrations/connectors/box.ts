import crypto from 'node:crypto';
import type { ConnectorCode, FileItem, Folder, Page, ProviderCall } from './types.ts';
import { iso, messageAt } from './types.ts';

// Box Content API 2.0 (https://developer.box.com/reference/): a folder's items are GET /folders/{id}/items
// (the root folder is `0`) with `limit`/`offset` and `total_count`, named `fields`; files and folders are
// told apart by `type`. Uploads are multipart POSTs to the upload host (`attributes` JSON + `file`),
// downloads GET /files/{id}/content answered with a 302 to the download host. Errors: `{ type: 'error',
// status, code, message }`. Box keeps no MIME type: it is inferred from the extension.

type Item = {
  type: 'file' | 'folder' | 'web_link';
  id: string;
  name: string;
  size?: number;
  created_at?: string;
  modified_at?: string;
  parent?: { id: string } | null;
};

const FIELDS = 'type,id,name,size,created_at,modified_at,parent';
const MIME: Record<string, string> = {
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};
const mimeOf = (name: string) =>
  MIME[name.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';

const file = (i: Item): FileItem => ({
  id: i.id,
  name: i.name,
  mimeType: mimeOf(i.name),
  size: i.size ?? null,
  folderId: i.parent?.id ?? null,
  createdAt: iso(i.created_at),
  updatedAt: iso(i.modified_at),
  rawData: i as unknown as Record<string, unknown>,
});
const folder = (i: Item): Folder => ({
  id: i.id,
  name: i.name,
  parentId: i.parent?.id ?? null,
  createdAt: iso(i.created_at),
  rawData: i as unknown as Record<string, unknown>,
});

async function items(
  call: ProviderCall,
  parent: string | undefined,
  a: { cursor?: string; limit: number },
  type: Item['type'],
): Promise<Page<Item>> {
  const offset = Number(a.cursor ?? 0);
  const b = (
    await call({
      method: 'GET',
      path: `/folders/${encodeURIComponent(parent ?? '0')}/items`,
      query: { fields: FIELDS, limit: a.limit, offset },
    })
  ).json<{ entries: Item[]; total_count: number }>();
  const next =
    offset + b.entries.length < b.total_count && b.entries.length ? String(offset + b.entries.length) : null;
  return { items: b.entries.filter((e) => e.type === type), next };
}

export const box: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'message', 'code'),
  storage: {
    async listFiles(call, a) {
      const p = await items(call, a.folderId, a, 'file');
      return { items: p.items.map(file), next: p.next };
    },
    async uploadFile(call, input) {
      const boundary = `pier${crypto.randomBytes(12).toString('hex')}`;
      const attributes = JSON.stringify({ name: input.name, parent: { id: input.folderId ?? '0' } });
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${attributes}\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${input.name.replace(/["\r\n]/g, '_')}"\r\n` +
            `Content-Type: ${input.mimeType}\r\n\r\n`,
        ),
        input.data,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const res = await call({
        method: 'POST',
        path: '/files/content',
        host: 'content',
        query: { fields: FIELDS },
        raw: { data: body, contentType: `multipart/form-data; boundary=${boundary}` },
      });
      return { ...file(res.json<{ entries: Item[] }>().entries[0]!), mimeType: input.mimeType };
    },
    async downloadFile(call, id) {
      const meta = (
        await call({ method: 'GET', path: `/files/${encodeURIComponent(id)}`, query: { fields: FIELDS } })
      ).json<Item>();
      const res = await call({
        method: 'GET',
        path: `/files/${encodeURIComponent(id)}/content`,
        headers: { accept: '*/*' },
      });
      return { data: res.body, mimeType: mimeOf(meta.name), filename: meta.name };
    },
    async openFile(call, id) {
      const meta = (
        await call({ method: 'GET', path: `/files/${encodeURIComponent(id)}`, query: { fields: FIELDS } })
      ).json<Item>();
      const res = await call({
        method: 'GET',
        path: `/files/${encodeURIComponent(id)}/content`,
        headers: { accept: '*/*' },
        stream: true,
      });
      return {
        stream: res.stream!,
        mimeType: mimeOf(meta.name),
        filename: meta.name,
        size: meta.size ?? null,
      };
    },
    async deleteFile(call, id) {
      await call({ method: 'DELETE', path: `/files/${encodeURIComponent(id)}` });
    },
    async listFolders(call, a) {
      const p = await items(call, a.parentId, a, 'folder');
      return { items: p.items.map(folder), next: p.next };
    },
    async createFolder(call, input) {
      const res = await call({
        method: 'POST',
        path: '/folders',
        query: { fields: FIELDS },
        json: { name: input.name, parent: { id: input.parentId ?? '0' } },
      });
      return folder(res.json<Item>());
    },
  },
};
