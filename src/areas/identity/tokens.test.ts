import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { expectAuthRequired } from '../../../test/security.ts';
import { seedUser } from '../../../test/seed.ts';
import { credentials } from '../../core/auth/tables.ts';
import type { ManualClock } from '../../core/clock.ts';
import { issuePersonalToken } from './tokens.ts';

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  t = await testApp();
  clock = t.clock as ManualClock;
});
afterAll(async () => {
  await t?.close();
});

async function lastUsed(token: string): Promise<Date | null> {
  const keyId = token.split('.')[1]!;
  const [row] = await t.deps.db.orm.select().from(credentials).where(eq(credentials.keyId, keyId));
  return row!.lastUsedAt;
}

describe('whoamiForCli', () => {
  it('returns the user and the token in use', async () => {
    const { user } = await seedUser(t.deps);
    const issuedAt = clock.now();
    const { token } = await issuePersonalToken(t.deps, user.id, 'deploy bot');
    const res = await t.call('whoamiForCli', {}, token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      user: { id: user.id, email: user.email },
      token: { label: 'deploy bot', createdAt: issuedAt.toISOString() },
    });
  });
});

describe('revokeTokenForCli', () => {
  it('revokes the calling token at once and leaves the others valid', async () => {
    const { user, token } = await seedUser(t.deps);
    const other = await issuePersonalToken(t.deps, user.id, 'other');
    expect((await t.call('whoamiForCli', {}, token)).statusCode).toBe(200); // now cached
    const res = await t.call('revokeTokenForCli', {}, token);
    expect(res.json()).toEqual({ ok: true });
    expectAuthRequired(await t.call('whoamiForCli', {}, token));
    expectAuthRequired(await t.call('revokeTokenForCli', {}, token));
    expect((await t.call('whoamiForCli', {}, other.token)).statusCode).toBe(200);
  });
});

describe('credentials', () => {
  it('expire at expiresAt', async () => {
    const { user } = await seedUser(t.deps);
    const expiresAt = new Date(clock.now().getTime() + 60_000);
    const { token } = await issuePersonalToken(t.deps, user.id, 'short', expiresAt);
    expect((await t.call('whoamiForCli', {}, token)).statusCode).toBe(200);
    clock.advance(60_000);
    expectAuthRequired(await t.call('whoamiForCli', {}, token));
  });

  it('a repeatedly used token is refused once revoked elsewhere, or once the cache has expired', async () => {
    const { token } = await seedUser(t.deps);
    const keyId = token.split('.')[1]!;
    for (let i = 0; i < 3; i++) expect((await t.call('whoamiForCli', {}, token)).statusCode).toBe(200);
    // Revoked in the database by another node: this one still serves from cache until its message arrives…
    await t.deps.db.orm
      .update(credentials)
      .set({ revokedAt: clock.now() })
      .where(eq(credentials.keyId, keyId));
    // …which drops the entry (what the pier_credential_revoked listener calls).
    t.deps.credentials.forget(keyId);
    expectAuthRequired(await t.call('whoamiForCli', {}, token));

    // Without a message, the database is read again once the 30 s cache has expired.
    const second = await seedUser(t.deps);
    const secondKeyId = second.token.split('.')[1]!;
    for (let i = 0; i < 3; i++) expect((await t.call('whoamiForCli', {}, second.token)).statusCode).toBe(200);
    await t.deps.db.orm
      .update(credentials)
      .set({ revokedAt: clock.now() })
      .where(eq(credentials.keyId, secondKeyId));
    clock.advance(30_001);
    expectAuthRequired(await t.call('whoamiForCli', {}, second.token));
  });

  it('a cached token is still checked whole: a wrong secret or kind for its keyId is refused', async () => {
    const { token } = await seedUser(t.deps);
    const [kind, keyId, secret] = token.split('.') as [string, string, string];
    expect((await t.call('whoamiForCli', {}, token)).statusCode).toBe(200);
    expect((await t.call('whoamiForCli', {}, token)).statusCode).toBe(200);
    const wrong = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    expectAuthRequired(await t.call('whoamiForCli', {}, `${kind}.${keyId}.${wrong}`));
    expectAuthRequired(await t.call('whoamiForCli', {}, `plat.${keyId}.${secret}`));
    expect((await t.call('whoamiForCli', {}, token)).statusCode).toBe(200);
  });

  it('store only an HMAC of the secret', async () => {
    const { token } = await seedUser(t.deps);
    const secret = token.split('.')[2]!;
    expect(secret.length).toBeGreaterThanOrEqual(43); // 32 random bytes, base64url
    const { rows } = await t.deps.db.query<{ r: string }>('SELECT c::text AS r FROM credentials c');
    expect(rows.some((r) => r.r.includes(secret))).toBe(false);
  });

  it('record lastUsedAt, rewriting it at most once a minute', async () => {
    const { token } = await seedUser(t.deps);
    expect(await lastUsed(token)).toBeNull();
    const first = clock.now();
    await t.call('whoamiForCli', {}, token);
    await vi.waitFor(async () => expect(await lastUsed(token)).toEqual(first));
    clock.advance(30_000);
    await t.call('whoamiForCli', {}, token);
    clock.advance(29_000);
    await t.call('whoamiForCli', {}, token);
    await new Promise((r) => setTimeout(r, 50));
    expect(await lastUsed(token)).toEqual(first);
    clock.advance(2_000);
    const later = clock.now();
    await t.call('whoamiForCli', {}, token);
    await vi.waitFor(async () => expect(await lastUsed(token)).toEqual(later));
  });
});
