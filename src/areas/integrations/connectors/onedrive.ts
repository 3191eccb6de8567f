import type { ConnectorCode, FileItem, Folder, Page, ProviderCall } from './types.ts';
import { iso, messageAt } from './types.ts';

// OneDrive through Microsoft Graph v1.0 (https://learn.microsoft.com/en-us/graph/api/resources/onedrive):
// the signed-in user's drive at /me/drive. A folder's children are GET /me/drive/items/{id}/children (the
// root: /me/drive/root/children) with `$top`, paged by `@odata.nextLink` (its `$skiptoken` is our cursor).
// Files and folders are both driveItems, told apart by their `file` / `folder` facet. Small uploads are
// PUT …/{parent-id}:/{name}:/content; a download is GET …/content, answered with a 302 to a pre-authenticated
// URL. Errors: `{ error: { code, message } }`.

type Item = {
  id: string;
  name: string;
  size?: number;
  file?: { mimeType?: string };
  folder?: { childCount?: number };
  parentReference?: { id?: string };
  createdDateTime?: string;
  lastModifiedDateTime?: string;
};

const file = (i: Item): FileItem => ({
  id: i.id,
  name: i.name,
  mimeType: i.file?.mimeType ?? null,
  size: i.size ?? null,
  folderId: i.parentReference?.id ?? null,
  createdAt: iso(i.createdDateTime),
  updatedAt: iso(i.lastModifiedDateTime),
  rawData: i as unknown as Record<string, unknown>,
});
const folder = (i: Item): Folder => ({
  id: i.id,
  name: i.name,
  parentId: i.parentReference?.id ?? null,
  createdAt: iso(i.createdDateTime),
  rawData: i as unknown as Record<string, unknown>,
});

const item = (id?: string) => (id ? `/me/drive/items/${encodeURIComponent(id)}` : '/me/drive/root');

async function children(
  call: ProviderCall,
  parent: string | undefined,
  a: { cursor?: string; limit: number },
  keep: (i: Item) => boolean,
): Promise<Page<Item>> {
  const b = (
    await call({
      method: 'GET',
      path: `${item(parent)}/children`,
      query: { $top: a.limit, $skiptoken: a.cursor },
    })
  ).json<{ value: Item[]; '@odata.nextLink'?: string }>();
  const next = b['@odata.nextLink'] ? new URL(b['@odata.nextLink']).searchParams.get('$skiptoken') : null;
  // Files and folders share one listing: a page may hold fewer of the kind asked for than `limit`.
  return { items: b.value.filter(keep), next };
}

export const onedrive: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'error.message', 'error.code'),
  storage: {
    async listFiles(call, a) {
      const p = await children(call, a.folderId, a, (i) => !!i.file);
      return { items: p.items.map(file), next: p.next };
    },
    async uploadFile(call, input) {
      const res = await call({
        method: 'PUT',
        path: `${item(input.folderId)}:/${encodeURIComponent(input.name)}:/content`,
        raw: { data: input.data, contentType: input.mimeType },
      });
      return file(res.json<Item>());
    },
    async downloadFile(call, id) {
      const meta = (await call({ method: 'GET', path: item(id) })).json<Item>();
      const res = await call({ method: 'GET', path: `${item(id)}/content`, headers: { accept: '*/*' } });
      return {
        data: res.body,
        mimeType: meta.file?.mimeType ?? 'application/octet-stream',
        filename: meta.name,
      };
    },
    async openFile(call, id) {
      const meta = (await call({ method: 'GET', path: item(id) })).json<Item>();
      const res = await call({
        method: 'GET',
        path: `${item(id)}/content`,
        headers: { accept: '*/*' },
        stream: true,
      });
      return {
        stream: res.stream!,
        mimeType: meta.file?.mimeType ?? 'application/octet-stream',
        filename: meta.name,
        size: meta.size ?? null,
      };
    },
    async deleteFile(call, id) {
      await call({ method: 'DELETE', path: item(id) });
    },
    async listFolders(call, a) {
      const p = await children(call, a.parentId, a, (i) => !!i.folder);
      return { items: p.items.map(folder), next: p.next };
    },
    async createFolder(call, input) {
      const res = await call({
        method: 'POST',
        path: `${item(input.parentId)}/children`,
        json: { name: input.name, folder: {}, '@microsoft.graph.conflictBehavior': 'fail' },
      });
      return folder(res.json<Item>());
    },
  },
};
