import type http from 'node:http';
import net from 'node:net';
import type stream from 'node:stream';
import type { Dispatcher } from 'undici';
import { sendSocket } from './connection-handoff.ts';
import type { Instance, NodeInstance } from './instances.ts';
import { SplicedConnection, type ToServer } from './proxy-splice.ts';
import { serveStatic } from './static-site.ts';

// The host router sits in front of Fastify on Pier's own HTTP server (a plain `request`/`upgrade` handler,
// not a Fastify route, so proxying costs one header parse and one pipe). A request whose Host is
// `<slug>.<APPS_DOMAIN>` goes to the app and never to Pier's routes; any other Host falls through to Pier.

const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  // undici refuses it; Pier's own server has already answered 100 Continue.
  'expect',
]);

/** The project slug an app hostname names, or null when the host is not an app hostname. */
export function appSlugFromHost(host: string | undefined, appsDomain: string): string | null {
  if (!host) return null;
  let h = host.toLowerCase();
  let domain = appsDomain.toLowerCase();
  // Compare without ports when the configured domain has none (a proxy in front may add or drop one).
  if (!domain.includes(':')) h = h.replace(/:\d+$/, '');
  else if (!h.includes(':')) domain = domain.replace(/:\d+$/, '');
  if (!h.endsWith(`.${domain}`)) return null;
  const slug = h.slice(0, -domain.length - 1);
  return /^[a-z0-9-]{1,63}$/.test(slug) ? slug : null;
}

function page(res: http.ServerResponse, status: number, title: string, text: string): void {
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body style="font-family:system-ui;max-width:40rem;margin:4rem auto"><h1>${title}</h1><p>${text}</p><p style="color:#888">Pier</p></body></html>\n`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function notFoundPage(res: http.ServerResponse, slug: string): void {
  page(res, 404, 'No app here', `Nothing is deployed at <b>${slug}</b>.`);
}

/** The Host header straight from rawHeaders (reading req.headers would build the whole headers object). */
function rawHost(raw: string[]): string | undefined {
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') return raw[i + 1];
  return undefined;
}

/** The request's headers for the app as a flat raw list: hop-by-hop dropped, X-Forwarded-* set. */
function forwardedHeaders(
  req: http.IncomingMessage,
  tls: boolean,
): { headers: string[]; host: string; hasBody: boolean } {
  const raw = req.rawHeaders;
  const out: string[] = [];
  let host = '';
  let xff = '';
  let hasBody = false;
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    const v = raw[i + 1]!;
    if (HOP.has(k)) {
      if (k === 'transfer-encoding') hasBody = true;
      continue;
    }
    if (k === 'x-forwarded-for') {
      xff = xff ? `${xff}, ${v}` : v;
      continue;
    }
    if (k === 'x-forwarded-proto' || k === 'x-forwarded-host') continue;
    if (k === 'host') host = v;
    else if (k === 'content-length' && v !== '0') hasBody = true;
    out.push(raw[i]!, v);
  }
  const ip = req.socket.remoteAddress ?? '';
  out.push(
    'x-forwarded-for',
    xff ? `${xff}, ${ip}` : ip,
    'x-forwarded-proto',
    tls ? 'https' : 'http',
    'x-forwarded-host',
    host,
  );
  return { headers: out, host, hasBody };
}

/** undici's raw response headers (a flat list of buffers) as Node's flat list, hop-by-hop dropped. */
function rawResponseHeaders(raw: Buffer[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i]!.toString('latin1');
    if (!HOP.has(k.toLowerCase())) out.push(k, raw[i + 1]!.toString('latin1'));
  }
  return out;
}

export type HostLookup = (slug: string) => Instance | null;

export class HostRouter {
  readonly #appsDomain: string;
  readonly #lookup: HostLookup;
  readonly #tls: boolean;
  /** Hands new connections to Node apps that can take them (APP_CONNECTION_HANDOFF). */
  readonly handoff: boolean;
  /** Client connections on the spliced proxy path, closed when Pier's server closes. */
  readonly #spliced = new Set<SplicedConnection>();
  readonly #route = (host: string): NodeInstance | null => {
    const slug = appSlugFromHost(host, this.#appsDomain);
    const inst = slug === null ? null : this.#lookup(slug);
    return inst?.kind === 'node' ? inst : null;
  };
  readonly #unspliced = (c: SplicedConnection): void => {
    this.#spliced.delete(c);
  };

  constructor(appsDomain: string, lookup: HostLookup, opts: { tls?: boolean; handoff?: boolean } = {}) {
    this.#appsDomain = appsDomain;
    this.#lookup = lookup;
    this.#tls = opts.tls ?? false;
    this.handoff = opts.handoff ?? false;
  }

  /**
   * A new connection whose first request names `host`: hands it (with the bytes read) to the app's process
   * when that app takes connections (and hand-off is on), else splices it to the app (decision 081); false
   * leaves it to Pier's HTTP server (and so to handle()/upgrade()), which `toServer` gives it to.
   */
  takeConnection(socket: net.Socket, head: Buffer, host: string, toServer: ToServer): boolean {
    const slug = appSlugFromHost(host, this.#appsDomain);
    if (slug === null) return false;
    const inst = this.#lookup(slug);
    if (inst?.kind !== 'node') return false;
    if (this.handoff && inst.handoff?.ready && !inst.retiring) {
      const message = {
        pier: 'conn',
        head: head.toString('latin1'),
        slug,
        domain: this.#appsDomain,
        proto: this.#tls ? 'https' : 'http',
      };
      if (sendSocket(inst.proc.child, socket, message)) {
        inst.handoff.handed++;
        return true;
      }
    }
    const conn = new SplicedConnection(socket, head, {
      route: this.#route,
      toServer,
      proto: this.#tls ? 'https' : 'http',
      onDone: this.#unspliced,
    });
    // It may have handed itself to the HTTP server already (an upgrade, say).
    if (!conn.done) this.#spliced.add(conn);
    return true;
  }

  /** Pier's server is closing: idle spliced connections close now, busy ones after their responses. */
  closeConnections(): void {
    for (const c of [...this.#spliced]) c.close();
  }

  /** Handles the request when its Host is an app hostname; returns false to let Pier answer it. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const slug = appSlugFromHost(rawHost(req.rawHeaders), this.#appsDomain);
    if (slug === null) return false;
    const inst = this.#lookup(slug);
    if (!inst) notFoundPage(res, slug);
    else if (inst.kind === 'static') serveStatic(inst.root, inst.spa, req, res);
    else this.#proxy(inst, req, res);
    return true;
  }

  #proxy(inst: NodeInstance, req: http.IncomingMessage, res: http.ServerResponse): void {
    inst.inflight++;
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        inst.inflight--;
      }
    };
    res.once('close', finish);
    const fwd = forwardedHeaders(req, this.#tls);
    // undici's pool: keep-alive connections reused across requests, the response body streamed into `res`
    // as it arrives; a request body streams from `req` (none: nothing to wait for).
    inst.upstream
      .stream(
        {
          path: req.url ?? '/',
          method: req.method as Dispatcher.HttpMethod,
          headers: fwd.headers,
          body: fwd.hasBody ? req : null,
          responseHeaders: 'raw',
          // The client's own pace and time limits apply; the app may stream for as long as it likes.
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        ({ statusCode, headers }) => {
          res.writeHead(statusCode, rawResponseHeaders(headers as unknown as Buffer[]));
          return res;
        },
      )
      .catch(() => {
        if (!res.headersSent)
          page(res, 502, 'App unavailable', 'The app did not answer; it may be restarting.');
        else res.destroy();
        finish();
      });
  }

  /** WebSocket (and other) upgrades to an app hostname: a raw two-way pipe to the app. */
  upgrade(req: http.IncomingMessage, socket: stream.Duplex, head: Buffer): boolean {
    const slug = appSlugFromHost(req.headers.host, this.#appsDomain);
    if (slug === null) return false;
    const inst = this.#lookup(slug);
    if (inst?.kind !== 'node') {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return true;
    }
    inst.inflight++;
    const up = inst.proc.socketPath
      ? net.connect(inst.proc.socketPath)
      : net.connect(inst.proc.port, '127.0.0.1');
    let done = false;
    const close = () => {
      if (done) return;
      done = true;
      inst.inflight--;
      up.destroy();
      socket.destroy();
    };
    up.on('connect', () => {
      const { headers } = forwardedHeaders(req, this.#tls);
      headers.push('connection', 'Upgrade', 'upgrade', req.headers.upgrade ?? 'websocket');
      let raw = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < headers.length; i += 2) raw += `${headers[i]}: ${headers[i + 1]}\r\n`;
      up.write(`${raw}\r\n`);
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', close);
    up.on('close', close);
    socket.on('error', close);
    socket.on('close', close);
    return true;
  }
}
