import type { UnifiedCase } from '../../unified-scenarios.ts';
import { bearer, nextId, nowIso, type Req, startKitFake } from './kit.ts';

// OneDrive via Microsoft Graph v1.0 as its reference describes it: driveItems under /v1.0/me/drive; children
// with $top and an absolute @odata.nextLink carrying $skiptoken; PUT …/{parent}:/{name}:/content uploads
// (201 the driveItem); GET …/content answers 302 to a pre-authenticated download URL (no bearer needed there);
// POST …/children with a `folder` facet makes a folder (409 nameAlreadyExists with conflictBehavior fail).

type Item = {
  id: string;
  name: string;
  size?: number;
  file?: { mimeType: string };
  folder?: { childCount: number };
  parentReference: { id: string; driveId: string };
  createdDateTime: string;
  lastModifiedDateTime: string;
  content?: Buffer;
};
const ROOT = '01ROOT';
const graphError = (status: number, code: string, message: string) => ({
  status,
  json: { error: { code, message } },
});

export function onedriveFake() {
  const store = { items: [] as Item[] };
  const view = ({ content: _c, ...i }: Item) => i;
  const parentOf = (seg: string) => (seg === 'root' ? ROOT : seg);
  const make = (parent: string, name: string, extra: Partial<Item>): Item => {
    const it: Item = {
      id: `01ITEM${nextId()}`,
      name,
      parentReference: { id: parent, driveId: 'b!drive' },
      createdDateTime: nowIso(),
      lastModifiedDateTime: nowIso(),
      ...extra,
    };
    store.items.push(it);
    return it;
  };
  const children = (r: Req, parent: string) => {
    const all = store.items.filter((i) => i.parentReference.id === parent);
    const top = Number(r.url.searchParams.get('$top') ?? 200);
    const skip = Number(r.url.searchParams.get('$skiptoken') ?? 0);
    const page = all.slice(skip, skip + top).map(view);
    const nextLink =
      skip + top < all.length ? `${r.origin}${r.path}?$top=${top}&$skiptoken=${skip + top}` : undefined;
    return { json: { value: page, ...(nextLink ? { '@odata.nextLink': nextLink } : {}) } };
  };
  const find = (id: string) => store.items.find((i) => i.id === id);
  const missing = graphError(404, 'itemNotFound', 'The resource could not be found.');
  return startKitFake({
    store,
    authorized: (r) => r.path.startsWith('/download/') || bearer(r),
    unauthorized: graphError(401, 'InvalidAuthenticationToken', 'Access token is empty.'),
    notFound: () => missing,
    routes: [
      ['GET', /^\/v1\.0\/me\/drive\/(root|items\/([\w]+))\/children$/, (r, m) => children(r, m[2] ?? ROOT)],
      [
        'POST',
        /^\/v1\.0\/me\/drive\/(root|items\/([\w]+))\/children$/,
        (r, m) => {
          const b = r.json<{ name: string; folder?: object }>();
          const parent = m[2] ?? ROOT;
          if (store.items.some((i) => i.parentReference.id === parent && i.name === b.name))
            return graphError(409, 'nameAlreadyExists', 'An item with the same name already exists.');
          return { status: 201, json: view(make(parent, b.name, { folder: { childCount: 0 } })) };
        },
      ],
      [
        'PUT',
        /^\/v1\.0\/me\/drive\/(root|items\/([\w]+)):\/([^/:]+):\/content$/,
        (r, m) => {
          const parent = parentOf(m[2] ?? 'root');
          const name = decodeURIComponent(m[3]!);
          const it = make(parent, name, {
            size: r.raw.length,
            file: { mimeType: String(r.headers['content-type'] ?? 'application/octet-stream') },
            content: r.raw,
          });
          return { status: 201, json: view(it) };
        },
      ],
      [
        'GET',
        /^\/v1\.0\/me\/drive\/items\/([\w]+)$/,
        (_r, m) => {
          const it = find(m[1]!);
          return it ? { json: view(it) } : missing;
        },
      ],
      [
        'GET',
        /^\/v1\.0\/me\/drive\/items\/([\w]+)\/content$/,
        (r, m) => {
          const it = find(m[1]!);
          if (!it?.file) return missing;
          return {
            status: 302,
            headers: { location: `${r.origin}/download/${it.id}?tempauth=eyJ0eXAi.x.y` },
          };
        },
      ],
      // Graph's download host is another origin (the bearer is not sent there); here it is the same server.
      [
        'GET',
        /^\/download\/([\w]+)$/,
        (_r, m) => {
          const it = find(m[1]!);
          return it
            ? { body: it.content ?? '', headers: { 'content-type': 'application/octet-stream' } }
            : missing;
        },
      ],
      [
        'DELETE',
        /^\/v1\.0\/me\/drive\/items\/([\w]+)$/,
        (_r, m) => {
          const it = find(m[1]!);
          if (!it) return missing;
          store.items.splice(store.items.indexOf(it), 1);
          return { status: 204 };
        },
      ],
    ],
  });
}

export const onedriveCase: UnifiedCase = {
  slug: 'onedrive',
  category: 'storage',
  start: onedriveFake,
  env: (url) => ({ INTEGRATIONS_ONEDRIVE_API_URL: `${url}/v1.0` }),
};
