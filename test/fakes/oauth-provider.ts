import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The OAuth 2.0 and HTTP plumbing shared by the integration provider fakes (integration-providers.ts): a
// real server on 127.0.0.1 with an authorization "consent" step, a token endpoint (authorization_code with
// PKCE checks, refresh_token, client auth in the body or as Basic), bearer checks on API calls, and knobs
// to expire tokens, refuse refreshes and answer 429 with Retry-After.

export type ApiRequest = {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  json(): Record<string, unknown>;
  token: string;
};
export type ApiAnswer = {
  status?: number;
  json?: unknown;
  body?: Buffer | string;
  headers?: Record<string, string>;
  /** Writes the body itself, at its own pace (a large file streamed in chunks). */
  write?: (res: http.ServerResponse) => Promise<void>;
};

export type ProviderSpec = {
  clientId: string;
  clientSecret: string;
  clientAuth: 'body' | 'basic';
  tokenBody: 'form' | 'json';
  tokenPath: string;
  expiresInSec?: number;
  /**
   * Extra fields of every token answer (Slack's team, Notion's workspace), or a function of the grant and
   * the fake's URLs (Salesforce's `instance_url` naming the fake's API host).
   */
  tokenExtra?:
    | Record<string, unknown>
    | ((grant: string, urls: { url: string; apiUrl: string }) => Record<string, unknown>);
  /**
   * The API answers on a second server (another port), as Salesforce's instance host or Pipedrive's company
   * domain; the login server then answers API paths with 404, so a call sent to the wrong host fails.
   */
  separateApiHost?: boolean;
  /** The token endpoint's error answer in the provider's own shape. */
  tokenError(error: string): ApiAnswer;
  /** The API's answer to a missing or dead token, in the provider's own shape. */
  unauthorized(): ApiAnswer;
  api(req: ApiRequest): ApiAnswer | Promise<ApiAnswer>;
};

export type FakeProvider = {
  url: string;
  /** Where the API answers: `url`, or the second server with `separateApiHost`. */
  apiUrl: string;
  /** Every API request (not the token endpoint), with the host it was sent to. */
  calls: { method: string; path: string; token: string; host: string }[];
  tokenGrants: { grant: string; body: Record<string, string> }[];
  /** What the end user's consent produces: a code bound to the authorization request. */
  consent(authorizationUrl: string): { code: string; state: string };
  expireAccessTokens(): void;
  refuseRefresh(on: boolean): void;
  revoked: string[];
  rateLimitNext(times: number, retryAfterSec: number): void;
  /** How long every API answer takes (a real provider's latency), for benchmarks. */
  setLatency(ms: number): void;
  close(): Promise<void>;
};

export async function startOAuthProvider(spec: ProviderSpec): Promise<FakeProvider> {
  const codes = new Map<string, { redirectUri: string; challenge?: string }>();
  const access = new Set<string>();
  const refresh = new Set<string>();
  const calls: FakeProvider['calls'] = [];
  const tokenGrants: FakeProvider['tokenGrants'] = [];
  const revoked: string[] = [];
  let refuse = false;
  let latencyMs = 0;
  let limited: { times: number; after: number } = { times: 0, after: 0 };

  const urls = { url: '', apiUrl: '' };
  const issue = (grant: string): Record<string, unknown> => {
    const a = `at_${crypto.randomBytes(12).toString('hex')}`;
    const r = `rt_${crypto.randomBytes(12).toString('hex')}`;
    access.add(a);
    refresh.add(r);
    return {
      access_token: a,
      refresh_token: r,
      token_type: 'bearer',
      ...(spec.expiresInSec ? { expires_in: spec.expiresInSec } : {}),
      ...(typeof spec.tokenExtra === 'function' ? spec.tokenExtra(grant, urls) : spec.tokenExtra),
    };
  };

  const send = (res: http.ServerResponse, a: ApiAnswer) => {
    const headers: Record<string, string> = { ...a.headers };
    if (a.write) {
      res.writeHead(a.status ?? 200, headers);
      return void a.write(res).then(
        () => res.end(),
        () => res.destroy(),
      );
    }
    let body: Buffer | string = '';
    if (a.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(a.json);
    } else if (a.body !== undefined) body = a.body;
    res.writeHead(a.status ?? 200, headers).end(body);
  };

  const tokenEndpoint = (req: http.IncomingMessage, raw: Buffer): ApiAnswer => {
    const text = raw.toString('utf8');
    const body: Record<string, string> =
      spec.tokenBody === 'json' ? JSON.parse(text || '{}') : Object.fromEntries(new URLSearchParams(text));
    tokenGrants.push({ grant: body.grant_type ?? '', body });
    let id = body.client_id;
    let secret = body.client_secret;
    if (spec.clientAuth === 'basic') {
      const [u, p] = Buffer.from(String(req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
        .toString()
        .split(':');
      id = decodeURIComponent(u ?? '');
      secret = decodeURIComponent(p ?? '');
    }
    if (id !== spec.clientId || secret !== spec.clientSecret) return spec.tokenError('invalid_client');
    if (body.grant_type === 'authorization_code') {
      const c = codes.get(body.code ?? '');
      codes.delete(body.code ?? '');
      if (!c || c.redirectUri !== body.redirect_uri) return spec.tokenError('invalid_grant');
      if (c.challenge) {
        const v = body.code_verifier ?? '';
        if (crypto.createHash('sha256').update(v).digest('base64url') !== c.challenge)
          return spec.tokenError('invalid_grant');
      }
      return { json: issue('authorization_code') };
    }
    if (body.grant_type === 'refresh_token') {
      if (refuse || !refresh.has(body.refresh_token ?? '')) return spec.tokenError('invalid_grant');
      return { json: issue('refresh_token') };
    }
    return spec.tokenError('unsupported_grant_type');
  };

  const handler =
    (role: 'login' | 'api' | 'both') => async (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://fake');
      try {
        if (role !== 'api') {
          if (req.method === 'POST' && url.pathname === spec.tokenPath)
            return send(res, tokenEndpoint(req, raw));
          // The consent screen in a browser: the end user approves at once and goes back to redirect_uri.
          if (req.method === 'GET' && url.searchParams.get('response_type') === 'code') {
            const { code, state } = consent(url.toString());
            const back = new URL(url.searchParams.get('redirect_uri') ?? '');
            back.searchParams.set('code', code);
            back.searchParams.set('state', state);
            res.writeHead(302, { location: back.toString() }).end();
            return;
          }
          if (url.pathname === '/revoke') {
            revoked.push(new URLSearchParams(raw.toString()).get('token') ?? '');
            return send(res, { status: 200, json: {} });
          }
          if (role === 'login')
            return send(res, { status: 404, json: { message: 'no API on the login host' } });
        }
        const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
        calls.push({
          method: req.method ?? 'GET',
          path: url.pathname,
          token,
          host: String(req.headers.host),
        });
        if (limited.times > 0) {
          limited.times--;
          return send(res, {
            status: 429,
            headers: { 'retry-after': String(limited.after) },
            json: { message: 'slow down' },
          });
        }
        if (latencyMs) await new Promise((ok) => setTimeout(ok, latencyMs));
        if (!access.has(token)) return send(res, spec.unauthorized());
        const answer = await spec.api({
          method: req.method ?? 'GET',
          url,
          headers: req.headers,
          raw,
          json: () => JSON.parse(raw.toString('utf8') || '{}'),
          token,
        });
        send(res, answer);
      } catch (err) {
        send(res, { status: 500, json: { message: String(err) } });
      }
    };
  function consent(authorizationUrl: string): { code: string; state: string } {
    const u = new URL(authorizationUrl);
    if (u.searchParams.get('client_id') !== spec.clientId) throw new Error('wrong client_id');
    const code = `code_${crypto.randomBytes(8).toString('hex')}`;
    codes.set(code, {
      redirectUri: u.searchParams.get('redirect_uri') ?? '',
      challenge: u.searchParams.get('code_challenge') ?? undefined,
    });
    return { code, state: u.searchParams.get('state') ?? '' };
  }

  const listen = async (s: http.Server) => {
    await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  const server = http.createServer(handler(spec.separateApiHost ? 'login' : 'both'));
  const apiServer = spec.separateApiHost ? http.createServer(handler('api')) : null;
  const base = await listen(server);
  urls.url = base;
  urls.apiUrl = apiServer ? await listen(apiServer) : base;
  const closeServer = (s: http.Server) =>
    new Promise<void>((ok) => {
      s.closeAllConnections();
      s.close(() => ok());
    });
  return {
    url: base,
    apiUrl: urls.apiUrl,
    calls,
    tokenGrants,
    revoked,
    consent,
    expireAccessTokens: () => access.clear(),
    refuseRefresh: (on) => {
      refuse = on;
    },
    setLatency: (ms) => {
      latencyMs = ms;
    },
    rateLimitNext: (times, after) => {
      limited = { times, after };
    },
    close: async () => {
      await Promise.all([closeServer(server), apiServer ? closeServer(apiServer) : undefined]);
    },
  };
}

/** Pages a list the provider's way: items from `offset`, and whether more follow. */
export function slice<T>(items: T[], offset: number, limit: number): { page: T[]; next: number | null } {
  const page = items.slice(offset, offset + limit);
  return { page, next: offset + limit < items.length ? offset + limit : null };
}
