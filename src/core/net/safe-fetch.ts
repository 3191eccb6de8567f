import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { ApiError } from '../errors.ts';
import { fetchErrors } from './errors.ts';
import { blockedReason } from './ip-policy.ts';
import { hostListed, NO_OUTBOUND_ALLOW, type OutboundAllow } from './outbound-allow.ts';

// The one way Pier fetches a URL a user gave it (webhooks, webdata, workflow http steps, integrations).
// Each hop: only http/https, the host resolved once and every address checked (ip-policy.ts), the
// connection pinned to the checked address (so DNS rebinding cannot swap it between check and connect),
// redirects followed by hand and re-checked, one deadline for the whole exchange and a byte limit on the
// response. Rules and error codes: docs/operations.md, "Outbound requests (SSRF guard)".

export type ResolvedAddress = { address: string; family: 4 | 6 };

export type SafeFetchOptions = {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Whole exchange, all redirects included. Default 15 s. */
  timeoutMs?: number;
  /** Largest response body accepted. Default 10 MiB. */
  maxBytes?: number;
  /** Default 5; 0 returns the redirect response itself. */
  maxRedirects?: number;
  /**
   * The operator's OUTBOUND_ALLOW (`deps.config.outboundAllow`): private ranges and host names that may be
   * reached. Callers pass it from config; without it only public addresses are fetched.
   */
  outboundAllow?: OutboundAllow;
  signal?: AbortSignal;
  /** Replaces DNS (tests); every address it returns is still checked. */
  resolve?: (host: string) => Promise<ResolvedAddress[]>;
  /**
   * Reuse connections (keep-alive) for callers that talk to the same few hosts often (integration
   * providers). A pooled connection is only ever reused for the same host and the same checked address.
   */
  keepAlive?: boolean;
  /**
   * A 2xx answer's body is not read: `stream` holds it (a proxy that streams a large file without holding
   * it). Other answers are read as usual. The deadline still covers the whole exchange, streaming included.
   */
  stream?: boolean;
};

export type SafeResponse = {
  /** The final URL after redirects. */
  url: string;
  status: number;
  ok: boolean;
  headers: Headers;
  redirects: string[];
  body: Buffer;
  /** With the `stream` option and a 2xx answer: the unread body (`body` is then empty). */
  stream?: import('node:stream').Readable;
  text(): string;
  json<T = unknown>(): T;
};

export const SAFE_FETCH_DEFAULTS = { timeoutMs: 15_000, maxBytes: 10 * 1024 * 1024, maxRedirects: 5 };

const REDIRECT = new Set([301, 302, 303, 307, 308]);
// Credentials meant for one origin never follow a redirect to another (as browsers' fetch does).
const ORIGIN_BOUND = ['authorization', 'cookie', 'proxy-authorization'];
const CONNECTION_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade']);

export async function safeFetch(input: string | URL, opts: SafeFetchOptions = {}): Promise<SafeResponse> {
  const timeoutMs = opts.timeoutMs ?? SAFE_FETCH_DEFAULTS.timeoutMs;
  const maxBytes = opts.maxBytes ?? SAFE_FETCH_DEFAULTS.maxBytes;
  const maxRedirects = opts.maxRedirects ?? SAFE_FETCH_DEFAULTS.maxRedirects;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;

  let url = parseUrl(String(input));
  let method = (opts.method ?? 'GET').toUpperCase();
  let body = opts.body;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    // Framing and routing headers are Pier's to set: a caller-chosen Host could reach another virtual
    // host on the checked address, and a wrong length would desynchronise the connection.
    if (!CONNECTION_HEADERS.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
  }
  const redirects: string[] = [];

  try {
    for (;;) {
      const target = await untilAborted(checkTarget(url, opts), signal);
      const res = await request(url, target, {
        method,
        headers,
        body,
        signal,
        maxBytes,
        keepAlive: opts.keepAlive === true,
        stream: opts.stream === true,
      });
      const location = res.headers.get('location');
      if (!REDIRECT.has(res.status) || !location || maxRedirects === 0) {
        return toResponse(url, res, redirects);
      }
      if (redirects.length >= maxRedirects) throw fetchErrors.tooManyRedirects(maxRedirects);
      const next = parseUrl(location, url);
      if (next.origin !== url.origin) for (const h of ORIGIN_BOUND) delete headers[h];
      if (res.status === 303 ? method !== 'HEAD' : res.status <= 302 && method === 'POST') {
        method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      redirects.push(next.toString());
      url = next;
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (deadline.aborted) throw fetchErrors.fetchTimeout(timeoutMs);
    if (signal.aborted) throw fetchErrors.fetchFailed(url.host, 'the request was cancelled');
    throw fetchErrors.fetchFailed(url.host, describe(err));
  }
}

// DNS lookups take no signal; the deadline still ends the wait (the lookup finishes in the background).
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw fetchErrors.urlNotAllowed(raw.slice(0, 200), 'it is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw fetchErrors.urlNotAllowed(url.protocol, 'only http and https URLs are fetched');
  }
  if (url.username || url.password) {
    throw fetchErrors.urlNotAllowed(url.host, 'credentials in the URL are not sent; use a header');
  }
  return url;
}

/** Resolves the host and checks every address; returns the one address the request will connect to. */
async function checkTarget(url: URL, opts: SafeFetchOptions): Promise<ResolvedAddress> {
  // WHATWG URL parsing has already normalised decimal, octal and hex IPv4 forms (http://2130706433/ is
  // 127.0.0.1) and compressed IPv6 literals, so literal hosts are checked in their canonical form.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = net.isIP(host);
  let addresses: ResolvedAddress[];
  if (literal) {
    addresses = [{ address: host, family: literal as 4 | 6 }];
  } else {
    try {
      addresses = opts.resolve
        ? await opts.resolve(host)
        : ((await dns.promises.lookup(host, { all: true, verbatim: true })) as ResolvedAddress[]);
    } catch {
      throw fetchErrors.fetchFailed(url.host, 'the host name does not resolve');
    }
    if (addresses.length === 0) throw fetchErrors.fetchFailed(url.host, 'the host name does not resolve');
  }
  // Every address must pass: a name that resolves to one public and one private address is refused,
  // otherwise the choice of address would decide the check.
  const allow = opts.outboundAllow ?? NO_OUTBOUND_ALLOW;
  const listed = !literal && hostListed(host, allow);
  for (const a of addresses) {
    const reason = blockedReason(a.address, { allow, hostListed: listed });
    if (reason) throw fetchErrors.urlNotAllowed(url.host, `it resolves to a ${reason} address`);
  }
  return addresses[0]!;
}

type RawResponse = {
  status: number;
  headers: Headers;
  body: Buffer;
  stream?: import('node:stream').Readable;
};

// Keep-alive pools, one per (scheme, host, port, checked address): a socket opened to an address that
// passed the check is reused only by a later request whose own check chose that same address. Idle sockets
// close after 4 s (below common servers' keep-alive timeouts); the map is bounded.
const POOL_IDLE_MS = 4_000;
const MAX_POOLS = 200;
const pools = new Map<string, http.Agent>();

function poolFor(url: URL, target: ResolvedAddress): http.Agent {
  const key = `${url.protocol}//${url.host}|${target.address}`;
  let agent = pools.get(key);
  if (agent) return agent;
  if (pools.size >= MAX_POOLS) {
    const [oldKey, oldAgent] = pools.entries().next().value as [string, http.Agent];
    pools.delete(oldKey);
    oldAgent.destroy();
  }
  const o = { keepAlive: true, timeout: POOL_IDLE_MS, maxSockets: 64, maxFreeSockets: 16 };
  agent = url.protocol === 'https:' ? new https.Agent(o) : new http.Agent(o);
  pools.set(key, agent);
  return agent;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

async function request(
  url: URL,
  target: ResolvedAddress,
  o: Parameters<typeof requestOnce>[2],
): Promise<RawResponse> {
  try {
    return await requestOnce(url, target, o);
  } catch (err) {
    // A pooled socket the server closed while idle fails at once with ECONNRESET; an idempotent request
    // is sent again once on a fresh connection (what Node's documentation recommends for keep-alive).
    const code = (err as NodeJS.ErrnoException).code;
    if ((err as { reusedSocket?: boolean }).reusedSocket && code === 'ECONNRESET' && IDEMPOTENT.has(o.method))
      return requestOnce(url, target, o);
    throw err;
  }
}

function requestOnce(
  url: URL,
  target: ResolvedAddress,
  o: {
    method: string;
    headers: Record<string, string>;
    body?: string | Uint8Array;
    signal: AbortSignal;
    maxBytes: number;
    keepAlive: boolean;
    stream?: boolean;
  },
): Promise<RawResponse> {
  const lib = url.protocol === 'https:' ? https : http;
  const headers: Record<string, string> = { 'user-agent': 'Pier', ...o.headers };
  if (o.body !== undefined) headers['content-length'] = String(Buffer.byteLength(o.body));
  return new Promise((resolve, reject) => {
    const req = lib.request(
      url,
      {
        method: o.method,
        headers,
        signal: o.signal,
        agent: o.keepAlive ? poolFor(url, target) : false,
        // The connection goes to the address that was checked, whatever DNS says now; TLS still verifies
        // the certificate against the host name.
        lookup: (_host, options, cb) => {
          const all = (options as { all?: boolean }).all;
          if (all) (cb as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
          else cb(null, target.address, target.family);
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (o.stream && status >= 200 && status < 300) {
          resolve({ status, headers: toHeaders(res), body: Buffer.alloc(0), stream: res });
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > o.maxBytes) {
          reject(fetchErrors.responseTooLarge(o.maxBytes));
          req.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > o.maxBytes) {
            reject(fetchErrors.responseTooLarge(o.maxBytes));
            req.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: toHeaders(res), body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('the response was cut off')));
      },
    );
    req.on('error', (err) => {
      if (req.reusedSocket) Object.assign(err, { reusedSocket: true });
      reject(err);
    });
    req.end(o.body);
  });
}

function toHeaders(res: http.IncomingMessage): Headers {
  const h = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    try {
      h.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
    } catch {
      // A header the Fetch API cannot hold is dropped rather than failing the whole response.
    }
  }
  return h;
}

function toResponse(url: URL, res: RawResponse, redirects: string[]): SafeResponse {
  return {
    url: url.toString(),
    status: res.status,
    ok: res.status >= 200 && res.status < 300,
    headers: res.headers,
    redirects,
    body: res.body,
    stream: res.stream,
    text: () => res.body.toString('utf8'),
    json: <T>() => JSON.parse(res.body.toString('utf8')) as T,
  };
}

function describe(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'the connection was refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host is unreachable';
    default:
      if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return 'the TLS handshake failed';
      return 'the request failed';
  }
}
