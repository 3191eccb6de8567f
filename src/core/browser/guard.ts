import zlib from 'node:zlib';
import type { BrowserContext, Request, Route } from 'playwright-core';
import { ApiError } from '../errors.ts';
import { fetchErrors } from '../net/errors.ts';
import type { OutboundAllow } from '../net/outbound-allow.ts';
import { type SafeResponse, safeFetch } from '../net/safe-fetch.ts';

// Every request a page makes leaves through safeFetch, never through Chromium's own network stack: the
// context routes `**/*` here, the request is fetched in Node (host resolved, every address checked against
// ip-policy + OUTBOUND_ALLOW, the connection pinned to the checked address, each redirect hop re-checked) and
// the response is handed back with `route.fulfill`. Nothing is ever passed on with `route.continue`: a
// pass-through would let Chromium resolve the name again (DNS rebinding) and follow redirects unchecked.
// Chromium is also started with a dead proxy (launch.ts), so whatever escapes the routing (a preconnect, a
// worker's request) fails closed. Why: docs/decisions/059-chromium-behind-the-ssrf-guard.md.

export type GuardOptions = {
  outboundAllow: OutboundAllow;
  /** Per sub-request deadline. */
  timeoutMs: number;
  /** Largest response body one request may bring in. */
  maxBytes: number;
  /** True when the request must be dropped (ad blocking); checked before anything is fetched. */
  blockRequest?: (url: string, resourceType: string) => boolean;
};

/** What happened to the main document, for the caller's error message and status. */
export type GuardLog = {
  /** Requests refused by the guard (blocked address, scheme), with the reason. */
  blocked: { url: string; error: ApiError }[];
  /** Requests that failed for another reason (DNS, refused, timeout, too large). */
  failed: { url: string; error: ApiError }[];
  /** Why the main frame's document could not be had (set by the guard, read by navigate.ts). */
  mainError?: ApiError;
  /** Requests dropped by the ad blocker (their URLs, so their empty slots can be hidden). */
  adsBlocked: string[];
  /** A main-frame navigation that redirected: the final URL and its response, served on the next goto. */
  redirected?: { from: string; to: string };
  stash: Map<string, SafeResponse>;
};

export function newGuardLog(): GuardLog {
  return { blocked: [], failed: [], adsBlocked: [], stash: new Map() };
}

const DROPPED_RESPONSE_HEADERS = new Set([
  'content-encoding',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  // Service workers are off; a page must not register anything that outlives the context either.
  'alt-svc',
]);

export async function installGuard(ctx: BrowserContext, opts: GuardOptions, log: GuardLog): Promise<void> {
  // WebSockets are not HTTP requests to Chromium's router: they get their own mock that closes at once, so no
  // socket is ever opened (route.connectToServer is never called).
  await ctx.routeWebSocket(/.*/, (ws) => {
    log.blocked.push({
      url: ws.url(),
      error: fetchErrors.urlNotAllowed(hostOf(ws.url()), 'WebSockets are not opened'),
    });
    void ws.close({ code: 1008, reason: 'blocked by Pier' }).catch(() => undefined);
  });
  await ctx.route('**/*', (route) => handle(route, opts, log));
}

async function handle(route: Route, opts: GuardOptions, log: GuardLog): Promise<void> {
  const req = route.request();
  const url = req.url();
  const abort = (code: string) => route.abort(code).catch(() => undefined);
  if (!/^https?:/i.test(url)) {
    log.blocked.push({
      url,
      error: fetchErrors.urlNotAllowed(url.split(':')[0]!, 'only http and https URLs are fetched'),
    });
    return abort('blockedbyclient');
  }
  const mainFrame = isMainFrame(req);
  // The page the user asked for is never an ad, whatever its path looks like.
  if (!mainFrame && opts.blockRequest?.(url, req.resourceType())) {
    log.adsBlocked.push(url);
    return abort('blockedbyclient');
  }
  const stashed = log.stash.get(url);
  if (stashed && mainFrame) {
    log.stash.delete(url);
    return fulfil(route, stashed);
  }
  let res: SafeResponse;
  try {
    const headers = await req.allHeaders();
    delete headers['accept-encoding'];
    res = await safeFetch(url, {
      method: req.method(),
      headers: { ...stripPseudo(headers), 'accept-encoding': 'gzip, deflate, br' },
      body: req.postDataBuffer() ?? undefined,
      outboundAllow: opts.outboundAllow,
      timeoutMs: opts.timeoutMs,
      maxBytes: opts.maxBytes,
    });
  } catch (err) {
    const error = err instanceof ApiError ? err : fetchErrors.fetchFailed(hostOf(url), 'the request failed');
    const blocked = error.code === 'URL_NOT_ALLOWED';
    (blocked ? log.blocked : log.failed).push({ url, error });
    if (mainFrame) log.mainError = error;
    const code = blocked ? 'blockedbyclient' : error.code === 'FETCH_TIMEOUT' ? 'timedout' : 'failed';
    return abort(code);
  }
  // A redirect fulfilled as a 3xx would be followed by Chromium outside the router (seen with playwright-core
  // 1.65), so safeFetch follows it here, hop by hop. A sub-resource or frame gets the final response at its
  // own URL; the main frame is sent to the final URL instead (so relative links resolve against it), and
  // the response already fetched is served from the stash on that navigation.
  if (mainFrame && res.redirects.length > 0) {
    log.redirected = { from: url, to: res.url };
    log.stash.set(res.url, res);
    return abort('aborted');
  }
  return fulfil(route, res);
}

function fulfil(route: Route, res: SafeResponse) {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!DROPPED_RESPONSE_HEADERS.has(k) && k !== 'set-cookie') headers[k] = v;
  });
  const cookies = res.headers.getSetCookie();
  if (cookies.length) headers['set-cookie'] = cookies.join('\n');
  return route
    .fulfill({ status: res.status, headers, body: decode(res.body, res.headers.get('content-encoding')) })
    .catch(() => undefined);
}

function isMainFrame(req: Request): boolean {
  try {
    return req.isNavigationRequest() && req.frame().parentFrame() === null;
  } catch {
    // A request of a service worker or a frame already gone has no frame.
    return false;
  }
}

function stripPseudo(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (!k.startsWith(':')) out[k] = v;
  return out;
}

// safeFetch hands back the bytes as sent; Chromium takes a fulfilled body as the final content.
function decode(body: Buffer, encoding: string | null): Buffer {
  try {
    switch (encoding?.trim().toLowerCase()) {
      case 'gzip':
      case 'x-gzip':
        return zlib.gunzipSync(body);
      case 'deflate':
        return zlib.inflateSync(body);
      case 'br':
        return zlib.brotliDecompressSync(body);
      default:
        return body;
    }
  } catch {
    return body;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url.slice(0, 100);
  }
}
