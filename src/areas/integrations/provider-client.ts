import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiError } from '../../core/errors.ts';
import { safeFetch } from '../../core/net/safe-fetch.ts';
import type {
  Connector,
  ProviderCall,
  ProviderRequest,
  ProviderResponse,
  TokenSet,
} from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';

// One provider call on behalf of a connection: the token injected, the URL built on the connector's API
// base (never another host), the SSRF guard with OUTBOUND_ALLOW, one refresh-and-retry on a 401 (or the
// provider's own "token expired"), a bounded wait on 429 `Retry-After`, and provider failures mapped to
// Pier's codes with the provider's message made safe (no tokens, no control characters, bounded length).

export const MAX_RATE_LIMIT_RETRIES = 2;
/** Idempotent calls (GET, HEAD, PUT, DELETE) are tried again on a 5xx or a timeout, after these waits. */
export const SERVER_ERROR_BACKOFF_MS = [300, 1200];
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);
const TRANSIENT_FETCH = new Set(['FETCH_TIMEOUT', 'FETCH_FAILED']);
/** A 429 asking for longer than this is answered to the caller (429 with Retry-After) instead of waited. */
export const MAX_RETRY_WAIT_SEC = 10;
/** A streamed download's whole exchange (30 MB at 1 Mbit/s takes 4 minutes). */
const STREAM_TIMEOUT_MS = 15 * 60_000;

export type CallSession = {
  connector: Connector;
  urls: { apiUrl: string; contentUrl: string };
  outboundAllow: import('../../core/net/outbound-allow.ts').OutboundAllow;
  tokens(): TokenSet;
  /** Refreshes (or waits for another worker's refresh); throws CONNECTION_NOT_CONNECTED when the grant is dead. */
  refresh(): Promise<boolean>;
  /** The provider refused the token and it cannot be refreshed: the connection is expired. */
  expire(reason: string): Promise<never>;
  /** Told of every attempt sent (the connection's call log); a status of null means no answer came. */
  record?(e: {
    method: string;
    url: URL;
    status: number | null;
    durationMs: number;
    error: string | null;
  }): void;
};

export function buildUrl(base: string, path: string, query?: ProviderRequest['query']): URL {
  const url = new URL(base + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

async function send(s: CallSession, req: ProviderRequest): Promise<ProviderResponse> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...s.connector.apiHeaders,
    ...req.headers,
  };
  let body: string | Buffer | undefined;
  if (req.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(req.json);
  } else if (req.raw) {
    headers['content-type'] = req.raw.contentType;
    body = req.raw.data;
  }
  const base = req.host === 'content' ? s.urls.contentUrl : s.urls.apiUrl;
  const url = buildUrl(base, req.path, req.query);
  placeCredential(s, headers, url);
  const started = performance.now();
  const log = (status: number | null, error: string | null) =>
    s.record?.({ method: req.method, url, status, durationMs: performance.now() - started, error });
  let res: Awaited<ReturnType<typeof safeFetch>>;
  try {
    res = await fetchOnce(s, req, url, headers, body);
  } catch (err) {
    log(null, (err as { code?: string }).code ?? 'FETCH_FAILED');
    throw err;
  }
  log(res.status, null);
  return { status: res.status, headers: res.headers, body: res.body, stream: res.stream, json: res.json };
}

function fetchOnce(
  s: CallSession,
  req: ProviderRequest,
  url: URL,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
) {
  return safeFetch(url, {
    method: req.method,
    headers,
    body,
    // A streamed download may take long; its bytes are never held, so no size bound either.
    timeoutMs: req.stream ? STREAM_TIMEOUT_MS : 30_000,
    maxBytes: req.stream ? Number.MAX_SAFE_INTEGER : 50 * 1024 * 1024,
    outboundAllow: s.outboundAllow,
    // A connection talks to the same provider host call after call: reuse the TCP/TLS connection.
    keepAlive: true,
    stream: req.stream,
  });
}

/** The connection's token or key where its provider wants it: a header (with its format), the query, Basic. */
function placeCredential(s: CallSession, headers: Record<string, string>, url: URL): void {
  const p = s.connector.placement;
  const secret = s.tokens().accessToken;
  if (p.in === 'basic') headers.authorization = `Basic ${secret}`;
  else if (p.in === 'query') url.searchParams.set(p.name, secret);
  else {
    // The caller's spelling of the same header must not stand beside ours.
    for (const k of Object.keys(headers)) if (k.toLowerCase() === p.name) delete headers[k];
    headers[p.name] = p.format.replace('{token}', secret).replace('{apiKey}', secret);
  }
}

function retryAfterSec(res: ProviderResponse): number {
  const h = res.headers.get('retry-after');
  const n = Number(h);
  if (h && Number.isFinite(n)) return Math.max(0, Math.ceil(n));
  const at = h ? Date.parse(h) : Number.NaN;
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - Date.now()) / 1000)) : 1;
}

/**
 * A ProviderCall for the unified operations: non-2xx answers become Pier errors. With `raw` (passthrough)
 * every answer comes back as is, after the same refresh-on-401 and 429 handling.
 */
export function providerCall(s: CallSession, opts: { raw?: boolean } = {}): ProviderCall {
  return async (req) => {
    let refreshed = false;
    let waits = 0;
    let retries = 0;
    // A provider's 5xx or a timeout on a call that is safe to repeat: tried again with back-off before the
    // caller sees it. POST and PATCH are never repeated (the provider may have acted on them).
    const retryable = IDEMPOTENT.has(req.method) ? SERVER_ERROR_BACKOFF_MS : [];
    for (;;) {
      let res: ProviderResponse;
      try {
        res = await send(s, req);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code && TRANSIENT_FETCH.has(code) && retries < retryable.length) {
          await sleep(retryable[retries++]!);
          continue;
        }
        throw err;
      }
      const failure = s.connector.failure?.(res) ?? null;
      const status = failure?.status ?? res.status;
      if (status >= 500 && retries < retryable.length) {
        await sleep(retryable[retries++]!);
        continue;
      }
      const authFailed = status === 401 || failure?.authExpired;
      if (authFailed && !refreshed) {
        refreshed = true;
        if (await s.refresh()) continue;
        await s.expire(
          safeMessage(
            s,
            failure?.message ?? s.connector.errorMessage(res) ?? 'the provider refused the token',
          ),
        );
      }
      if (status === 429 && waits < MAX_RATE_LIMIT_RETRIES) {
        const wait = retryAfterSec(res);
        if (wait <= MAX_RETRY_WAIT_SEC) {
          waits++;
          await sleep(wait * 1000);
          continue;
        }
      }
      if (opts.raw || (status >= 200 && status < 300)) return res;
      throw mapFailure(s, res, status, failure?.message);
    }
  };
}

function mapFailure(s: CallSession, res: ProviderResponse, status: number, message?: string): ApiError {
  const slug = s.connector.slug;
  const text = safeMessage(s, message ?? s.connector.errorMessage(res) ?? `HTTP ${status}`);
  if (status === 429) return integrationsErrors.providerRateLimited(slug, retryAfterSec(res));
  if (status === 401) return integrationsErrors.connectionNotConnected('expired', text);
  if (status === 404 || status === 410) return integrationsErrors.providerResourceNotFound(slug, text);
  if (status === 403) return integrationsErrors.providerForbidden(slug, text);
  if (status >= 400 && status < 500) return integrationsErrors.providerRejected(slug, status, text);
  return integrationsErrors.providerError(slug, status, text);
}

/** The provider's message as Pier repeats it: one line, bounded, and never carrying a token. */
export function safeMessage(s: Pick<CallSession, 'tokens'> | null, message: string): string {
  // Control characters (C0 and DEL) become spaces, so a message stays one printable line.
  let out = [...message]
    .map((ch) => (ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127 ? ' ' : ch))
    .join('')
    .trim();
  const t = s?.tokens();
  for (const secret of [t?.accessToken, t?.refreshToken])
    if (secret) out = out.split(secret).join('[redacted]');
  // Bearer-looking strings the provider may echo (xoxb-…, ya29.…, long opaque tokens).
  out = out.replace(/\b(xox[a-z]-[\w-]+|ya29\.[\w.-]+|secret_[\w]+)\b/g, '[redacted]');
  return out.length > 300 ? `${out.slice(0, 297)}...` : out;
}
