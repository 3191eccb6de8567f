import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { expectError } from '../../../test/security.ts';
import { seedUser } from '../../../test/seed.ts';
import type { ManualClock } from '../../core/clock.ts';
import { LOGIN_CODE_TTL_MS, pkceChallenge } from './login-codes.ts';

// Failed guesses are limited per client address; each test uses its own address so they stay independent.
const LIMIT = { limit: 4, windowSec: 60 };
let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  t = await testApp({ limits: { loginCodeFailures: LIMIT } });
  clock = t.clock as ManualClock;
});
afterAll(async () => {
  await t?.close();
});

let ipSeq = 0;
const newIp = () => `10.9.${Math.floor(++ipSeq / 250)}.${ipSeq % 250}`;
const CODE_RE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

async function mint(token: string, body: Record<string, unknown> = {}) {
  const res = await t.call('createLoginCodeForCli', body, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { code: string; expiresAt: string; label: string };
}

function exchange(body: Record<string, unknown>, ip: string) {
  return t.call('exchangeCliAuthCode', body, undefined, {}, { remoteAddress: ip });
}

describe('createLoginCodeForCli', () => {
  it('mints an XXXX-XXXX code valid five minutes, labelled, stored only as a hash', async () => {
    const { token } = await seedUser(t.deps);
    const now = clock.now();
    const card = await mint(token);
    expect(card.code).toMatch(CODE_RE);
    expect(card.expiresAt).toBe(new Date(now.getTime() + LOGIN_CODE_TTL_MS).toISOString());
    expect(card.label).toBe(`cli ${now.toISOString().slice(0, 16).replace('T', ' ')}`);
    expect((await mint(token, { label: 'work laptop' })).label).toBe('work laptop');
    expect((await mint(token, { device: { label: 'mbp' } })).label).toBe('cli mbp');
    const raw = card.code.replace('-', '');
    const { rows } = await t.deps.db.query('SELECT row_to_json(l)::text AS r FROM login_codes l');
    expect(rows.some((r) => String(r.r).includes(raw))).toBe(false);
  });

  it('refuses a challenge that is not an S256 value', async () => {
    const { token } = await seedUser(t.deps);
    expectError(
      await t.call('createLoginCodeForCli', { codeChallenge: 'plain' }, token),
      400,
      'VALIDATION_ERROR',
    );
  });
});

describe('exchangeCliAuthCode', () => {
  it('redeems a code for a new personal token under the code label', async () => {
    const { user, token } = await seedUser(t.deps);
    const { code } = await mint(token, { label: 'ci runner' });
    const res = await exchange({ code }, newIp());
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      token: expect.stringMatching(/^pk\.[A-Za-z0-9]+\.[A-Za-z0-9_-]{43}$/),
      label: 'ci runner',
      user: { id: user.id, email: user.email },
    });
    expect(body.token).not.toBe(token);
    const who = await t.call('whoamiForCli', {}, body.token);
    expect(who.json()).toMatchObject({ user: { id: user.id }, token: { label: 'ci runner' } });
    // A second code mints another token; both stay valid.
    const second = (await exchange({ code: (await mint(token)).code }, newIp())).json().token;
    expect(second).not.toBe(body.token);
    expect((await t.call('whoamiForCli', {}, body.token)).statusCode).toBe(200);
    expect((await t.call('whoamiForCli', {}, second)).statusCode).toBe(200);
  });

  it('matches case-insensitively, ignoring hyphens and spaces', async () => {
    const { token } = await seedUser(t.deps);
    const { code } = await mint(token);
    const sloppy = ` ${code.slice(0, 2).toLowerCase()} ${code.slice(2).replace('-', ' - ')} `;
    expect((await exchange({ code: sloppy }, newIp())).statusCode).toBe(200);
  });

  it('answers CODE_INVALID for unknown or malformed codes, CODE_USED on reuse', async () => {
    const { token } = await seedUser(t.deps);
    const ip = newIp();
    expectError(await exchange({ code: 'BCDF-GHJK' }, ip), 400, 'CODE_INVALID');
    expectError(await exchange({ code: 'AEIO-U123' }, ip), 400, 'CODE_INVALID');
    expectError(await exchange({ code: '' }, ip), 400, 'CODE_INVALID');
    const { code } = await mint(token);
    expect((await exchange({ code }, newIp())).statusCode).toBe(200);
    expectError(await exchange({ code }, newIp()), 400, 'CODE_USED');
    expectError(await exchange({ code: code.toLowerCase() }, newIp()), 400, 'CODE_USED');
  });

  it('expires five minutes after minting (CODE_EXPIRED)', async () => {
    const { token } = await seedUser(t.deps);
    const early = await mint(token);
    const late = await mint(token);
    clock.advance(LOGIN_CODE_TTL_MS - 1000);
    expect((await exchange({ code: early.code }, newIp())).statusCode).toBe(200);
    clock.advance(1000);
    expectError(await exchange({ code: late.code }, newIp()), 400, 'CODE_EXPIRED');
  });

  it('gives the token to exactly one of many concurrent redemptions; the rest get CODE_USED', async () => {
    const { user, token } = await seedUser(t.deps);
    const { code } = await mint(token);
    const results = await Promise.all(Array.from({ length: 12 }, () => exchange({ code }, newIp())));
    const ok = results.filter((r) => r.statusCode === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 400, 'CODE_USED');
    const { rows } = await t.deps.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM credentials WHERE kind = 'pk' AND user_id = $1",
      [user.id],
    );
    expect(rows[0]!.n).toBe(2); // the seeded token and exactly one minted by the winner
  });

  it('redeems a browser-flow code only with its PKCE verifier', async () => {
    const { token } = await seedUser(t.deps);
    const verifier = crypto.randomBytes(32).toString('base64url');
    const { code } = await mint(token, { codeChallenge: pkceChallenge(verifier) });
    const ip = newIp();
    expectError(await exchange({ code }, ip), 400, 'CODE_INVALID');
    const wrong = crypto.randomBytes(32).toString('base64url');
    expectError(await exchange({ code, codeVerifier: wrong }, ip), 400, 'CODE_INVALID');
    expectError(await exchange({ code, codeVerifier: 'short' }, ip), 400, 'VALIDATION_ERROR');
    expect((await exchange({ code, codeVerifier: verifier }, ip)).statusCode).toBe(200);
    // A hand-off card code has no challenge and needs no verifier.
    expect((await exchange({ code: (await mint(token)).code }, newIp())).statusCode).toBe(200);
  });

  it('rate-limits failed guesses per client address with 429 and Retry-After', async () => {
    const { token } = await seedUser(t.deps);
    const ip = newIp();
    for (let i = 0; i < LIMIT.limit; i++)
      expectError(await exchange({ code: 'BBBB-BBBB' }, ip), 400, 'CODE_INVALID');
    const limited = await exchange({ code: 'BBBB-BBBB' }, ip);
    expectError(limited, 429, 'RATE_LIMITED');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(LIMIT.windowSec);
    // While limited even a good code waits; another address is unaffected.
    const { code } = await mint(token);
    expectError(await exchange({ code }, ip), 429, 'RATE_LIMITED');
    expect((await exchange({ code: (await mint(token)).code }, newIp())).statusCode).toBe(200);
    // After the window the address may try again.
    clock.advance(retryAfter * 1000);
    expect((await exchange({ code }, ip)).statusCode).toBe(200);
  });

  it('does not count successful redemptions against the limit', async () => {
    const { token } = await seedUser(t.deps);
    const ip = newIp();
    for (let i = 0; i < LIMIT.limit + 2; i++) {
      expect((await exchange({ code: (await mint(token)).code }, ip)).statusCode).toBe(200);
    }
  });
});
