import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { seedOperator, seedOrg } from '../../../test/seed.ts';
import { mintLoginCode } from './login-codes.ts';

let t: TestApp;
let closed: TestApp;
beforeAll(async () => {
  t = await testApp();
  closed = await testApp({ env: { SIGNUP: 'off' } });
});
afterAll(async () => {
  await t?.close();
  await closed?.close();
});

const PASSWORD = 'correct horse battery';

function cookieOf(res: LightMyRequestResponse): string {
  const raw = String(res.headers['set-cookie']);
  expect(raw).toMatch(/HttpOnly/);
  expect(raw).toMatch(/SameSite=Lax/);
  return raw.split(';')[0]!;
}

async function post(app: TestApp, url: string, body: unknown, headers: Record<string, string> = {}) {
  return app.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
}

async function signUp(email = `${uniq('d')}@example.com`) {
  const res = await post(t, '/api/dashboard/sign-up', { email, password: PASSWORD });
  expect(res.statusCode).toBe(200);
  return { email, cookie: cookieOf(res), csrf: res.json().csrfToken as string, user: res.json().user };
}

describe('dashboard sign-up, sign-in and sessions', () => {
  it('signs up, probes the session, signs in again and rejects a wrong password generically', async () => {
    const s = await signUp();
    const probe = await t.app.inject({ url: '/api/dashboard/session', headers: { cookie: s.cookie } });
    expect(probe.json()).toMatchObject({ user: { email: s.email }, csrfToken: s.csrf, signup: true });
    const anon = await t.app.inject({ url: '/api/dashboard/session' });
    expect(anon.json()).toMatchObject({ user: null, csrfToken: null });

    const again = await post(t, '/api/dashboard/sign-in', {
      email: s.email.toUpperCase(),
      password: PASSWORD,
    });
    expect(again.statusCode).toBe(200);
    const wrong = await post(t, '/api/dashboard/sign-in', { email: s.email, password: 'nope nope nope' });
    const unknown = await post(t, '/api/dashboard/sign-in', { email: 'x@nobody.test', password: PASSWORD });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.json()).toEqual(wrong.json());
    expect(wrong.json().error.code).toBe('SIGNIN_FAILED');

    const dup = await post(t, '/api/dashboard/sign-up', { email: s.email, password: PASSWORD });
    expect(dup.json().error.code).toBe('SIGNUP_FAILED');
    const weak = await post(t, '/api/dashboard/sign-up', { email: `${uniq('w')}@x.test`, password: 'short' });
    expect(weak.json().error.code).toBe('WEAK_PASSWORD');
    const bad = await post(t, '/api/dashboard/sign-up', { email: 'not-an-email', password: PASSWORD });
    expect(bad.statusCode).toBe(400);
  });

  it('uses the cookie as a function-API credential, with CSRF on every POST', async () => {
    const s = await signUp();
    const noCsrf = await t.call('listMyOrgsForCli', {}, undefined, { cookie: s.cookie });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json().error.code).toBe('CSRF_INVALID');
    const wrongCsrf = await t.call('listMyOrgsForCli', {}, undefined, {
      cookie: s.cookie,
      'x-csrf-token': 'x',
    });
    expect(wrongCsrf.statusCode).toBe(403);
    const foreign = await t.call('listMyOrgsForCli', {}, undefined, {
      cookie: s.cookie,
      'x-csrf-token': s.csrf,
      origin: 'https://evil.example',
    });
    expect(foreign.json().error.code).toBe('CSRF_INVALID');
    const ok = await t.call('listMyOrgsForCli', {}, undefined, {
      cookie: s.cookie,
      'x-csrf-token': s.csrf,
      origin: 'http://pier.test',
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual([]);

    const who = await t.call('whoamiForCli', {}, undefined, { cookie: s.cookie, 'x-csrf-token': s.csrf });
    expect(who.json().user.email).toBe(s.email);
    // A bearer token needs no CSRF token, and a bad bearer never falls back to the cookie.
    const tok = await t.call('createTokenForCli', {}, undefined, {
      cookie: s.cookie,
      'x-csrf-token': s.csrf,
    });
    expect(await t.call('listMyOrgsForCli', {}, tok.json().token)).toHaveProperty('statusCode', 200);
    const badBearer = await t.call('listMyOrgsForCli', {}, 'pk.nope.nope', { cookie: s.cookie });
    expect(badBearer.statusCode).toBe(401);
  });

  it('never consults the session for a function open to anyone (exchangeCliAuthCode)', async () => {
    // A browser that is signed in to the dashboard and also runs `pier login --code` sends its cookie
    // without a CSRF header: the exchange needs no caller, so the cookie must not make it fail.
    const s = await signUp();
    const { code } = await mintLoginCode(t.deps, { userId: s.user.id, label: 'laptop' });
    const res = await t.call('exchangeCliAuthCode', { code }, undefined, { cookie: s.cookie });
    expect(res.statusCode).toBe(200);
    expect(res.json().token).toMatch(/^pk\./);
    // Same with a cookie that is no longer valid, or a stale bearer token.
    const again = await t.call('exchangeCliAuthCode', { code }, 'pk.nope.nope', { cookie: 'pier_session=x' });
    expect(again.json().error.code).toBe('CODE_USED');
  });

  it('signs out with CSRF, and revokeTokenForCli with a session signs that session out', async () => {
    const s = await signUp();
    const h = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    const refused = await post(t, '/api/dashboard/sign-out', {}, { cookie: s.cookie });
    expect(refused.json().error.code).toBe('CSRF_INVALID');
    const out = await post(t, '/api/dashboard/sign-out', {}, h);
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toMatch(/Max-Age=0/);
    expect((await t.call('whoamiForCli', {}, undefined, h)).statusCode).toBe(401);

    const s2 = await signUp();
    const h2 = { cookie: s2.cookie, 'x-csrf-token': s2.csrf };
    expect((await t.call('revokeTokenForCli', {}, undefined, h2)).statusCode).toBe(200);
    expect((await t.call('whoamiForCli', {}, undefined, h2)).statusCode).toBe(401);
  });

  it('rate-limits failed sign-ins', async () => {
    const s = await signUp();
    for (let i = 0; i < 10; i++)
      await post(t, '/api/dashboard/sign-in', { email: s.email, password: 'wrong wrong' });
    const limited = await post(t, '/api/dashboard/sign-in', { email: s.email, password: PASSWORD });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });

  it('turns sign-up off with SIGNUP=off; an operator invite link sets a password once', async () => {
    const off = await post(closed, '/api/dashboard/sign-up', { email: 'a@b.test', password: PASSWORD });
    expect(off.json().error.code).toBe('SIGNUP_DISABLED');
    const op = await seedOperator(closed.deps);
    const { org } = await seedOrg(closed.deps);
    const email = `${uniq('inv')}@example.com`;
    const link = await closed.call('adminCreateInviteLink', { email }, op.token);
    expect(link.statusCode).toBe(200);
    expect(link.json().url).toMatch(/^http:\/\/pier\.test\/set-password#token=/);
    const token = new URL(link.json().url).hash.slice('#token='.length);
    const info = await post(closed, '/api/dashboard/password-link', { token });
    expect(info.json()).toEqual({ email });
    const set = await post(closed, '/api/dashboard/set-password', { token, password: PASSWORD });
    expect(set.statusCode).toBe(200);
    const reuse = await post(closed, '/api/dashboard/set-password', { token, password: PASSWORD });
    expect(reuse.json().error.code).toBe('LINK_INVALID');
    const signin = await post(closed, '/api/dashboard/sign-in', { email, password: PASSWORD });
    expect(signin.statusCode).toBe(200);
    expect(org.slug).toBeTruthy();
  });
});

describe('dashboard static serving', () => {
  it('serves the SPA for page paths and never shadows API prefixes', async () => {
    const page = await t.app.inject({ url: '/projects/abc' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    for (const url of ['/v1/nothing', '/api/nothing', '/cdn/x', '/blobs/x', '/.well-known/nothing']) {
      // Each surface answers its own JSON error (404, or 401/403 where it checks a credential first).
      const r = await t.app.inject({ url });
      expect(r.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(r.headers['content-type'], url).toMatch(/application\/json/);
      expect(r.json().error.code, url).toBeTruthy();
    }
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ ok: true });
    expect((await t.app.inject({ url: '/assets/../../package.json' })).statusCode).toBe(404);
  });
});
