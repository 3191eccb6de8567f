import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The fake-provider kit for unified connectors: a real HTTP server on 127.0.0.1 that checks the credential
// the way the provider wants it (each fake says how) and answers from a route table written from the
// provider's public API reference. A provider fake is then data: its store, its routes, its credential
// check. The scenarios that drive every fake through Pier's unified API are in test/unified-scenarios.ts.

export type Req = {
  method: string;
  url: URL;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  json<T = Record<string, unknown>>(): T;
  /** The fake's own origin (for absolute next links, redirects to a download host). */
  origin: string;
};
export type Answer = {
  status?: number;
  json?: unknown;
  body?: Buffer | string;
  headers?: Record<string, string>;
};
export type Route = [method: string, path: RegExp, handle: (req: Req, m: RegExpMatchArray) => Answer];

export type KitFake<S> = {
  url: string;
  store: S;
  /** Every API request: method and path with query. */
  calls: { method: string; path: string }[];
  close(): Promise<void>;
};

export const SECRET = `tok_${crypto.randomBytes(8).toString('hex')}`;

export async function startKitFake<S>(def: {
  store: S;
  /** True when the request carries the connection's credential where the provider wants it. */
  authorized(req: Req): boolean;
  /** The provider's answer to a missing or wrong credential. */
  unauthorized: Answer;
  /** The provider's answer to an unknown path or record. */
  notFound: (req: Req) => Answer;
  routes: Route[];
}): Promise<KitFake<S>> {
  const calls: KitFake<S>['calls'] = [];
  let origin = '';
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', origin);
    const r: Req = {
      method: req.method ?? 'GET',
      url,
      path: url.pathname,
      headers: req.headers,
      raw,
      json: <T>() => JSON.parse(raw.toString('utf8') || '{}') as T,
      origin,
    };
    calls.push({ method: r.method, path: `${url.pathname}${url.search}` });
    let a: Answer;
    try {
      if (!def.authorized(r)) a = def.unauthorized;
      else {
        a = def.notFound(r);
        for (const [method, path, handle] of def.routes) {
          const m = method === r.method ? r.path.match(path) : null;
          if (m) {
            a = handle(r, m);
            break;
          }
        }
      }
    } catch (err) {
      a = { status: 500, json: { error: String(err) } };
    }
    const headers: Record<string, string> = { ...a.headers };
    let body: Buffer | string = '';
    if (a.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(a.json);
    } else if (a.body !== undefined) body = a.body;
    res.writeHead(a.status ?? 200, headers).end(body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    store: def.store,
    calls,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

export const bearer = (req: Req) => req.headers.authorization === `Bearer ${SECRET}`;
export const basicUser = (req: Req, password = '') =>
  req.headers.authorization === `Basic ${Buffer.from(`${SECRET}:${password}`).toString('base64')}`;

let seq = 1000;
export const nextId = () => String(++seq);
export const nowIso = () => new Date().toISOString();

/** Offset paging over a list: the page and the next offset (null at the end). */
export function window<T>(all: T[], offset: number, limit: number): { page: T[]; next: number | null } {
  const page = all.slice(offset, offset + limit);
  return { page, next: offset + limit < all.length ? offset + limit : null };
}

/** Multipart/form-data parts (Box's upload): name → { headers, data }. */
export function multipart(req: Req): Map<string, { filename?: string; data: Buffer }> {
  const boundary = String(req.headers['content-type']).match(/boundary=("?)([^";]+)\1/)?.[2];
  const out = new Map<string, { filename?: string; data: Buffer }>();
  if (!boundary) return out;
  const text = req.raw.toString('latin1');
  for (const part of text.split(`--${boundary}`).slice(1, -1)) {
    const i = part.indexOf('\r\n\r\n');
    const head = part.slice(0, i);
    const name = head.match(/name="([^"]+)"/)?.[1];
    const filename = head.match(/filename="([^"]*)"/)?.[1];
    if (name) out.set(name, { filename, data: Buffer.from(part.slice(i + 4, -2), 'latin1') });
  }
  return out;
}
