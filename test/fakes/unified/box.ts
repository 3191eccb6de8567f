import type { UnifiedCase } from '../../unified-scenarios.ts';
import { bearer, multipart, nextId, nowIso, startKitFake } from './kit.ts';

// Box 2.0 as its reference describes it (https://developer.box.com/reference/): GET /2.0/folders/{id}/items
// with limit/offset answering `{ total_count, entries, offset, limit }` (root `0`); POST /2.0/folders
// {name, parent: {id}} (409 item_name_in_use); uploads to the upload host, POST /api/2.0/files/content
// multipart with `attributes` before `file`, answering `{ total_count: 1, entries: [file] }`; GET
// /2.0/files/{id}/content answers 302 to the download host; DELETE /2.0/files/{id} 204.

type Item = {
  type: 'file' | 'folder';
  id: string;
  name: string;
  size?: number;
  created_at: string;
  modified_at: string;
  parent: { type: 'folder'; id: string };
  content?: Buffer;
};
const boxError = (status: number, code: string, message: string) => ({
  status,
  json: { type: 'error', status, code, message, request_id: 'req1' },
});

export function boxFake() {
  const store = { items: [] as Item[] };
  const view = ({ content: _c, ...i }: Item) => i;
  const make = (type: Item['type'], parent: string, name: string, content?: Buffer): Item => {
    const it: Item = {
      type,
      id: nextId(),
      name,
      created_at: nowIso(),
      modified_at: nowIso(),
      parent: { type: 'folder', id: parent },
      ...(content ? { size: content.length, content } : {}),
    };
    store.items.push(it);
    return it;
  };
  const find = (id: string, type: Item['type']) => store.items.find((i) => i.id === id && i.type === type);
  const missing = boxError(404, 'not_found', 'Not Found');
  return startKitFake({
    store,
    authorized: (r) => r.path.startsWith('/dl/') || bearer(r),
    unauthorized: boxError(401, 'unauthorized', 'Unauthorized'),
    notFound: () => missing,
    routes: [
      [
        'GET',
        /^\/2\.0\/folders\/(\w+)\/items$/,
        (r, m) => {
          const all = store.items.filter((i) => i.parent.id === m[1]);
          const limit = Number(r.url.searchParams.get('limit') ?? 100);
          const offset = Number(r.url.searchParams.get('offset') ?? 0);
          return {
            json: {
              total_count: all.length,
              entries: all.slice(offset, offset + limit).map(view),
              offset,
              limit,
            },
          };
        },
      ],
      [
        'POST',
        /^\/2\.0\/folders$/,
        (r) => {
          const b = r.json<{ name: string; parent: { id: string } }>();
          if (store.items.some((i) => i.parent.id === b.parent.id && i.name === b.name))
            return boxError(409, 'item_name_in_use', 'Item with the same name already exists');
          return { status: 201, json: view(make('folder', b.parent.id, b.name)) };
        },
      ],
      [
        'POST',
        /^\/api\/2\.0\/files\/content$/,
        (r) => {
          const parts = multipart(r);
          const attrs = JSON.parse(parts.get('attributes')?.data.toString() ?? '{}') as {
            name: string;
            parent: { id: string };
          };
          const data = parts.get('file')?.data;
          if (!attrs.name || !data) return boxError(400, 'bad_request', 'attributes and file are required');
          return {
            status: 201,
            json: { total_count: 1, entries: [view(make('file', attrs.parent.id, attrs.name, data))] },
          };
        },
      ],
      [
        'GET',
        /^\/2\.0\/files\/(\w+)$/,
        (_r, m) => {
          const it = find(m[1]!, 'file');
          return it ? { json: view(it) } : missing;
        },
      ],
      [
        'GET',
        /^\/2\.0\/files\/(\w+)\/content$/,
        (r, m) => {
          const it = find(m[1]!, 'file');
          return it ? { status: 302, headers: { location: `${r.origin}/dl/${it.id}/download` } } : missing;
        },
      ],
      // dl.boxcloud.com in Box; the same server here.
      [
        'GET',
        /^\/dl\/(\w+)\/download$/,
        (_r, m) => {
          const it = find(m[1]!, 'file');
          return it
            ? { body: it.content ?? '', headers: { 'content-type': 'application/octet-stream' } }
            : missing;
        },
      ],
      [
        'DELETE',
        /^\/2\.0\/files\/(\w+)$/,
        (_r, m) => {
          const it = find(m[1]!, 'file');
          if (!it) return missing;
          store.items.splice(store.items.indexOf(it), 1);
          return { status: 204 };
        },
      ],
    ],
  });
}

export const boxCase: UnifiedCase = {
  slug: 'box',
  category: 'storage',
  start: boxFake,
  env: (url) => ({ INTEGRATIONS_BOX_API_URL: `${url}/2.0`, INTEGRATIONS_BOX_CONTENT_URL: `${url}/api/2.0` }),
};
