import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';

// Sign-up on a Pier without SMTP_URL (docs/decisions/103): the new account reads Pier's own mail to its
// address in the dashboard, and only that; the view is off with SMTP_URL, with SELF_MAIL=off, and (auto)
// when PUBLIC_URL is not a loopback address.

let local: TestApp;
let smtp: TestApp;
let off: TestApp;
let pub: TestApp;
beforeAll(async () => {
  local = await testApp({ env: { PUBLIC_URL: 'http://127.0.0.1:8787' } });
  smtp = await testApp({ env: { PUBLIC_URL: 'http://127.0.0.1:8787', SMTP_URL: 'smtp://127.0.0.1:1' } });
  off = await testApp({ env: { PUBLIC_URL: 'http://localhost:8787', SELF_MAIL: 'off' } });
  pub = await testApp({ env: { PUBLIC_URL: 'https://pier.example.com' } });
});
afterAll(async () => {
  for (const t of [local, smtp, off, pub]) await t?.close();
});

async function signUp(t: TestApp, email = `${uniq('s')}@example.com`) {
  const origin = t.deps.config.publicUrl;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/dashboard/sign-up',
    headers: { 'content-type': 'application/json', origin },
    payload: JSON.stringify({ email, password: 'a long enough password' }),
  });
  expect(res.statusCode).toBe(200);
  const cookie = String(res.headers['set-cookie']).split(';')[0]!;
  return { email, headers: { cookie, 'x-csrf-token': res.json().csrfToken as string, origin } };
}

function myMail(t: TestApp, headers: Record<string, string>, body: unknown = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/api/fn/listMySystemMailForCli',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
}

const items = (r: LightMyRequestResponse) =>
  r.json().items as { to: string; subject: string; text: string }[];

describe('mail Pier sent you (no SMTP_URL)', () => {
  it('shows a new account its verification link, which verifies it', async () => {
    const logged = vi.spyOn(local.deps.log, 'info');
    const a = await signUp(local);
    // The operator's console gets the same one-time link.
    const line = logged.mock.calls.map((c) => String(c[0])).find((m) => m.includes(a.email));
    logged.mockRestore();
    expect(line).toMatch(
      /No SMTP_URL: the verification link for .* is http:\/\/127\.0\.0\.1:8787\/verify-email#token=/,
    );
    const session = await local.app.inject({ url: '/api/dashboard/session', headers: a.headers });
    expect(session.json()).toMatchObject({ selfMail: true, user: { emailVerified: false } });
    const r = await myMail(local, a.headers);
    expect(r.statusCode).toBe(200);
    expect(items(r)).toHaveLength(1);
    expect(items(r)[0]).toMatchObject({ to: a.email, subject: 'Verify your e-mail address for Pier' });
    const token = /\/verify-email#token=([A-Za-z0-9_-]{43})/.exec(items(r)[0]!.text)![1];
    const v = await local.app.inject({
      method: 'POST',
      url: '/api/dashboard/verify-email',
      headers: { ...a.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ token }),
    });
    expect(v.statusCode).toBe(200);
    expect(v.json().user.emailVerified).toBe(true);
  });

  it("never shows another address's mail", async () => {
    const a = await signUp(local);
    const b = await signUp(local);
    const seen = items(await myMail(local, b.headers));
    expect(seen.map((m) => m.to)).toEqual([b.email]);
    expect(JSON.stringify(seen)).not.toContain(a.email);
  });

  it('needs a signed-in account and valid input', async () => {
    const anon = await myMail(local, { origin: local.deps.config.publicUrl });
    expect(anon.statusCode).toBe(401);
    const a = await signUp(local);
    const bad = await myMail(local, a.headers, { limit: 0 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBeTruthy();
  });

  it('is off with SMTP_URL, with SELF_MAIL=off and on a public URL', async () => {
    for (const t of [smtp, off, pub]) {
      const a = await signUp(t);
      const session = await t.app.inject({ url: '/api/dashboard/session', headers: a.headers });
      expect(session.json().selfMail).toBe(false);
      const r = await myMail(t, a.headers);
      expect(r.statusCode).toBe(403);
      expect(r.json().error.code).toBe('SELF_MAIL_OFF');
    }
  });
});
