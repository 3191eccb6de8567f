import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderEntry } from '../../src/areas/integrations/catalogue/schema.ts';

// One configurable fake provider for the whole catalogue (catalogue.test.ts): a real server on 127.0.0.1
// that plays every entry under `/<slug>/…` and holds each to its entry's quirks. It refuses what the real
// provider would: a client authenticating the wrong way at the token endpoint, a token body in the wrong
// encoding, scopes joined with the wrong separator, a missing PKCE challenge or a verifier that does not
// match, a missing authorization parameter, a credential sent anywhere but where the entry says, a missing
// per-call header, or a connection variable that did not reach the URL.

export type Expect = {
  entry: ProviderEntry;
  clientId: string;
  clientSecret: string;
  /** The connection's variables, as the path segments the overrides put them in. */
  vars: Record<string, string>;
  /** API-key providers: the key; Basic: `user:password`. */
  secret?: string;
  /** The access tokens' lifetime (`expires_in`); 3600 unless said. */
  expiresInSec?: number;
};

type Grant = { grant: string; body: Record<string, string>; contentType: string };

export type CatalogueFake = {
  url: string;
  expect(e: Expect): void;
  consent(slug: string, authorizationUrl: string): { code: string; state: string };
  grants(slug: string): Grant[];
  calls(slug: string): { path: string; query: string }[];
  revoked(slug: string): string[];
  expireAccessTokens(slug: string): void;
  /** The end user revoked the grant at the provider: every access and refresh token of the slug dies. */
  revokeGrant(slug: string): void;
  /** The next `times` API calls answer `status` (a provider's 5xx), then they work again. */
  failCalls(slug: string, times: number, status: number): void;
  /** The next `times` refresh grants answer 503 (a provider outage), then they work again. */
  failRefreshes(slug: string, times: number): void;
  /** Refusals the fake made (what Pier got wrong), per slug: empty when every quirk was honoured. */
  refusals(slug: string): string[];
  close(): Promise<void>;
};

function setAt(target: Record<string, unknown>, path: string, value: unknown) {
  const keys = path.split('.');
  let o = target;
  for (const k of keys.slice(0, -1)) {
    o[k] ??= {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys.at(-1)!] = value;
}

export async function startCatalogueFake(): Promise<CatalogueFake> {
  const expects = new Map<string, Expect>();
  const codes = new Map<string, { slug: string; redirectUri: string; challenge?: string }>();
  const access = new Map<string, string>();
  const refresh = new Map<string, string>();
  const state = new Map<
    string,
    { grants: Grant[]; calls: { path: string; query: string }[]; revoked: string[]; refusals: string[] }
  >();
  const of = (slug: string) => {
    const s = state.get(slug) ?? { grants: [], calls: [], revoked: [], refusals: [] };
    state.set(slug, s);
    return s;
  };
  const refuse = (slug: string, why: string, status = 400) => {
    of(slug).refusals.push(why);
    return { status, json: { error: 'invalid_request', error_description: why } };
  };

  const failing = new Map<string, number>();
  const failingCalls = new Map<string, { times: number; status: number }>();
  const issue = (slug: string, grant: string) => {
    const a = `at_${slug}_${crypto.randomBytes(8).toString('hex')}`;
    const r = `rt_${slug}_${crypto.randomBytes(8).toString('hex')}`;
    access.set(a, slug);
    refresh.set(r, slug);
    const expires_in = expects.get(slug)?.expiresInSec ?? 3600;
    return { access_token: a, refresh_token: r, token_type: 'bearer', expires_in, scope: grant };
  };

  const varsInPath = (x: Expect, segs: string[]) => {
    const names = Object.keys(x.entry.variables);
    for (let i = 0; i < names.length; i++)
      if (segs[i] !== x.vars[names[i]!]) return `variable ${names[i]} did not reach the URL (${segs[i]})`;
    return null;
  };

  function token(x: Expect, req: http.IncomingMessage, raw: string) {
    const a = x.entry.auth;
    if (a.kind !== 'oauth2') return refuse(x.entry.slug, 'no token endpoint for a key-based provider');
    const ct = String(req.headers['content-type'] ?? '');
    const wantJson = a.tokenBody === 'json';
    if (wantJson !== ct.startsWith('application/json'))
      return refuse(x.entry.slug, `token body must be ${a.tokenBody}, got ${ct}`);
    const body: Record<string, string> = wantJson
      ? JSON.parse(raw)
      : Object.fromEntries(new URLSearchParams(raw));
    of(x.entry.slug).grants.push({ grant: body.grant_type ?? '', body, contentType: ct });
    const basic = String(req.headers.authorization ?? '');
    if (a.clientAuth === 'basic') {
      if (!basic.startsWith('Basic ') || body.client_secret)
        return refuse(x.entry.slug, 'client must authenticate with HTTP Basic only', 401);
      const [u, p] = Buffer.from(basic.slice(6), 'base64').toString().split(':');
      if (decodeURIComponent(u ?? '') !== x.clientId || decodeURIComponent(p ?? '') !== x.clientSecret)
        return refuse(x.entry.slug, 'wrong client credentials', 401);
    } else {
      if (basic) return refuse(x.entry.slug, 'client must authenticate in the body', 401);
      if (body.client_id !== x.clientId || body.client_secret !== x.clientSecret)
        return refuse(x.entry.slug, 'wrong client credentials', 401);
    }
    if (body.grant_type === 'authorization_code') {
      const c = codes.get(body.code ?? '');
      codes.delete(body.code ?? '');
      if (!c || c.slug !== x.entry.slug || c.redirectUri !== body.redirect_uri)
        return { status: 400, json: { error: 'invalid_grant' } };
      if (a.pkce) {
        const v = body.code_verifier ?? '';
        if (crypto.createHash('sha256').update(v).digest('base64url') !== c.challenge)
          return refuse(x.entry.slug, 'PKCE verifier does not match');
      } else if (body.code_verifier)
        return refuse(x.entry.slug, 'PKCE verifier sent to a provider without PKCE');
      return { status: 200, json: issue(x.entry.slug, 'authorization_code') };
    }
    if (body.grant_type === 'refresh_token') {
      const left = failing.get(x.entry.slug) ?? 0;
      if (left > 0) {
        failing.set(x.entry.slug, left - 1);
        return { status: 503, json: { error: 'temporarily_unavailable' } };
      }
      if (refresh.get(body.refresh_token ?? '') !== x.entry.slug)
        return { status: 400, json: { error: 'invalid_grant' } };
      refresh.delete(body.refresh_token ?? '');
      return { status: 200, json: issue(x.entry.slug, 'refresh_token') };
    }
    return { status: 400, json: { error: 'unsupported_grant_type' } };
  }

  function api(x: Expect, req: http.IncomingMessage, url: URL, rest: string) {
    const e = x.entry;
    const a = e.auth;
    of(e.slug).calls.push({ path: rest, query: url.search });
    const fail = failingCalls.get(e.slug);
    if (fail && fail.times > 0) {
      fail.times--;
      return { status: fail.status, json: { message: `fake failure ${fail.status}` } };
    }
    for (const [h, v] of Object.entries(e.headers))
      if (req.headers[h] !== v) return refuse(e.slug, `header ${h} missing`);
    // The credential, exactly where the entry says and nowhere else.
    let presented: string | null = null;
    if (a.kind === 'basic') {
      const h = String(req.headers.authorization ?? '');
      presented = h.startsWith('Basic ') ? Buffer.from(h.slice(6), 'base64').toString() : null;
      if (presented !== x.secret) return { status: 401, json: { message: 'bad basic credentials' } };
    } else {
      const p = a.kind === 'oauth2' ? a.tokenPlacement : a.placement;
      if (p.in === 'query') {
        presented = url.searchParams.get(p.name);
        if (req.headers.authorization) return refuse(e.slug, 'credential sent in a header too');
      } else {
        const h = req.headers[p.name];
        const [before, after] = p.format.split(/\{token\}|\{apiKey\}/) as [string, string];
        if (typeof h === 'string' && h.startsWith(before) && h.endsWith(after))
          presented = h.slice(before.length, h.length - after.length);
        if (p.name !== 'authorization' && req.headers.authorization)
          return refuse(e.slug, 'credential sent in authorization too');
      }
      const ok = a.kind === 'oauth2' ? access.get(presented ?? '') === e.slug : presented === x.secret;
      if (!ok) return { status: 401, json: { message: 'invalid token' } };
    }
    // Enough of the shapes the coded connectors read (Slack's ok, Pipedrive's data) to find an account.
    const body: Record<string, unknown> = { ok: true, id: `acct-${e.slug}`, data: { id: `acct-${e.slug}` } };
    if (e.account && rest === e.account.path.replace(/\/+$/, '')) {
      if (e.account.name) setAt(body, e.account.name, `Account of ${e.slug}`);
      setAt(body, e.account.id, `acct-${e.slug}`);
    }
    body.echo = { method: req.method, path: rest };
    return { status: 200, json: body };
  }

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const [, slug = '', kind = '', ...segs] = url.pathname.split('/');
    const x = expects.get(slug);
    let answer: { status: number; json: unknown };
    if (!x) {
      // Revocation endpoints keep the provider's own path (they move with TOKEN_URL's origin only).
      const tok = new URLSearchParams(raw).get('token') ?? '';
      const owner = access.get(tok) ?? refresh.get(tok);
      if (req.method === 'POST' && owner) of(owner).revoked.push(tok);
      answer = { status: owner ? 200 : 404, json: {} };
    } else {
      const names = Object.keys(x.entry.variables);
      const bad = varsInPath(x, segs);
      const rest = `/${segs.slice(names.length).join('/')}`;
      if (bad) answer = refuse(slug, bad);
      else if (kind === 'token' && req.method === 'POST') answer = token(x, req, raw);
      else if (kind === 'api' || kind === 'content') answer = api(x, req, url, rest.replace(/\/+$/, ''));
      else answer = { status: 404, json: { message: 'no such endpoint' } };
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    expect: (e) => {
      expects.set(e.entry.slug, e);
    },
    consent(slug, authorizationUrl) {
      const x = expects.get(slug)!;
      const a = x.entry.auth;
      if (a.kind !== 'oauth2') throw new Error(`${slug} has no consent screen`);
      const u = new URL(authorizationUrl);
      const q = u.searchParams;
      const problems: string[] = [];
      const segs = u.pathname.split('/').slice(3);
      const bad = varsInPath(x, segs);
      if (bad) problems.push(bad);
      if (q.get('client_id') !== x.clientId) problems.push('wrong client_id');
      if (q.get('response_type') !== 'code') problems.push('response_type is not code');
      if (a.scopes.length && q.get(a.scopeParam) !== a.scopes.join(a.scopeSeparator))
        problems.push(
          `scopes not joined with '${a.scopeSeparator}' in ${a.scopeParam}: ${q.get(a.scopeParam)}`,
        );
      for (const [k, v] of Object.entries(a.authParams)) if (q.get(k) !== v) problems.push(`${k} missing`);
      const challenge = q.get('code_challenge') ?? undefined;
      if (a.pkce && (!challenge || q.get('code_challenge_method') !== 'S256')) problems.push('PKCE missing');
      if (!a.pkce && challenge) problems.push('PKCE sent to a provider without it');
      of(slug).refusals.push(...problems);
      const code = `code_${crypto.randomBytes(8).toString('hex')}`;
      codes.set(code, { slug, redirectUri: q.get('redirect_uri') ?? '', challenge });
      return { code, state: q.get('state') ?? '' };
    },
    grants: (slug) => of(slug).grants,
    calls: (slug) => of(slug).calls,
    revoked: (slug) => of(slug).revoked,
    refusals: (slug) => of(slug).refusals,
    expireAccessTokens: (slug) => {
      for (const [t, s] of access) if (s === slug) access.delete(t);
    },
    revokeGrant: (slug) => {
      for (const m of [access, refresh]) for (const [t, s] of m) if (s === slug) m.delete(t);
    },
    failCalls: (slug, times, status) => {
      failingCalls.set(slug, { times, status });
    },
    failRefreshes: (slug, times) => {
      failing.set(slug, times);
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
