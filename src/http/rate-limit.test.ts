import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import { seedOrg, seedUser, seedV1Tenant } from '../../test/seed.ts';
import type { ManualClock } from '../core/clock.ts';
import { pruneRateBuckets } from '../core/rate-limit/prune-buckets-job.ts';
import { callFunction } from './fn-call.ts';
import type { FnDef } from './fn-kit.ts';
import { functions } from './fn-registry.ts';

// The function API's limits (per credential, per client address) and the v1 key's own limit against the
// plan's and the default, on the test clock: nothing refills until the test moves it.

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    env: {
      FN_RATE_LIMIT_BURST: '3',
      FN_RATE_LIMIT_PER_SEC: '1',
      FN_RATE_LIMIT_IP_BURST: '2',
      FN_RATE_LIMIT_IP_PER_SEC: '0.5',
      V1_RATE_LIMIT_BURST: '4',
      V1_RATE_LIMIT_PER_SEC: '2',
    },
  });
});
afterAll(async () => {
  await t?.close();
});

const clock = () => t.clock as ManualClock;

describe('function API rate limits', () => {
  it('refuses a credential past its burst with 429, Retry-After and the headers, and answers after the clock moves', async () => {
    const a = await seedUser(t.deps);
    const b = await seedUser(t.deps);
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.call('listMyOrgsForCli', {}, a.token);
      codes.push(res.statusCode);
      expect(res.headers['ratelimit-policy']).toBe('"fn";q=3;w=3');
      expect(res.headers.ratelimit).toBe(`"fn";r=${2 - i};t=${i + 1}`);
    }
    expect(codes).toEqual([200, 200, 200]);
    const refused = await t.call('listMyOrgsForCli', {}, a.token);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers.ratelimit).toBe('"fn";r=0;t=1');
    // Another credential has its own bucket.
    expect((await t.call('listMyOrgsForCli', {}, b.token)).statusCode).toBe(200);
    clock().advance(1000);
    expect((await t.call('listMyOrgsForCli', {}, a.token)).statusCode).toBe(200);
    expect((await t.call('listMyOrgsForCli', {}, a.token)).statusCode).toBe(429);
  });

  it('limits calls without a credential per client address', async () => {
    const exchange = (ip: string) =>
      t.call('exchangeCliAuthCode', { code: 'not-a-code' }, undefined, {}, { remoteAddress: ip });
    const first = await exchange('10.0.0.1');
    expect(first.statusCode).not.toBe(429);
    expect(first.headers['ratelimit-policy']).toBe('"fn-ip";q=2;w=4');
    expect((await exchange('10.0.0.1')).statusCode).not.toBe(429);
    const refused = await exchange('10.0.0.1');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    expect(refused.headers['retry-after']).toBe('2');
    // Another address is unaffected; a bad bearer counts against its address too.
    expect((await exchange('10.0.0.2')).statusCode).not.toBe(429);
    const bad = await t.call('listMyOrgsForCli', {}, 'pk.nope.nope', {}, { remoteAddress: '10.0.0.1' });
    expect(bad.statusCode).toBe(429);
    clock().advance(2000);
    expect((await exchange('10.0.0.1')).statusCode).not.toBe(429);
  });
});

describe('function tools of the MCP endpoint (fn-call.ts)', () => {
  it("take from the caller's function-API bucket: past it a RATE_LIMITED error", async () => {
    const u = await seedUser(t.deps);
    const v = await t.deps.credentials.verifyCaller(u.token);
    const def = (functions as readonly FnDef[]).find((f) => f.name === 'listMyOrgsForCli')!;
    const ctx = { ip: '10.9.9.9', log: t.app.log };
    // One token spent over the route first: the same bucket.
    expect((await t.call('listMyOrgsForCli', {}, u.token)).statusCode).toBe(200);
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await callFunction(t.deps, def, v!.caller, {}, ctx));
    expect(results.map((r) => r.ok)).toEqual([true, true, false]);
    const refused = results[2]!;
    expect(refused.ok === false && refused.error.code).toBe('RATE_LIMITED');
    expect(refused.ok === false && refused.error.headers['retry-after']).toBe('1');
  });
});

describe('v1 per-key limits', () => {
  const cdnList = (key: string) => t.v1('GET', '/cdn/assets', key);

  it("a key's own limit wins over the default; another organization's key keeps the default", async () => {
    const { org, owner } = await seedOrg(t.deps);
    const other = await seedV1Tenant(t.deps);
    const created = await t.call(
      'createApiKeyForCli',
      { orgSlug: org.slug, kind: 'live', rateLimit: { perSec: 1, burst: 2 } },
      owner.token,
    );
    expect(created.statusCode).toBe(200);
    expect(created.json().rateLimit).toEqual({ perSec: 1, burst: 2 });
    const key = created.json().key as string;
    const ok = await cdnList(key);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['ratelimit-policy']).toBe('"v1";q=2;w=2');
    expect((await cdnList(key)).statusCode).toBe(200);
    const refused = await cdnList(key);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    // The other organization's key: the default bucket, untouched.
    const theirs = await cdnList(other.live);
    expect(theirs.statusCode).toBe(200);
    expect(theirs.headers['ratelimit-policy']).toBe('"v1";q=4;w=2');

    const listed = await t.call('listApiKeysForCli', { orgSlug: org.slug }, owner.token);
    expect(listed.json()[0].rateLimit).toEqual({ perSec: 1, burst: 2 });

    // Raised: applies at once (the key is read again), and the bucket refills toward the new burst.
    const keyId = created.json().keyId as string;
    const raised = await t.call(
      'updateApiKeyForCli',
      { orgSlug: org.slug, keyId, rateLimit: { perSec: 10, burst: 20 } },
      owner.token,
    );
    expect(raised.statusCode).toBe(200);
    clock().advance(1000);
    const after = await cdnList(key);
    expect(after.statusCode).toBe(200);
    expect(after.headers['ratelimit-policy']).toBe('"v1";q=20;w=2');
    // Cleared: back to the plan's (free: the default).
    await t.call('updateApiKeyForCli', { orgSlug: org.slug, keyId, rateLimit: null }, owner.token);
    expect((await cdnList(key)).headers['ratelimit-policy']).toBe('"v1";q=4;w=2');
  });

  it("falls back to the organization's plan", async () => {
    const { org, owner } = await seedOrg(t.deps, { plan: 'pro' });
    const created = await t.call('createApiKeyForCli', { orgSlug: org.slug, kind: 'test' }, owner.token);
    expect(created.json().rateLimit).toBeNull();
    const res = await cdnList(created.json().key);
    expect(res.statusCode).toBe(200);
    // pro: five times the default (4 burst at 2/s).
    expect(res.headers['ratelimit-policy']).toBe('"v1";q=20;w=2');
  });

  it('refuses bad limits with 400 VALIDATION_ERROR', async () => {
    const { org, owner } = await seedOrg(t.deps);
    for (const rateLimit of [
      { perSec: 0, burst: 5 },
      { perSec: 1, burst: 1.5 },
      { perSec: 1, burst: 0 },
      { perSec: 1 },
      { perSec: 1, burst: 5, extra: 1 },
      { perSec: 200_000, burst: 5 },
    ]) {
      // The owner's function-API bucket (burst 3) refilled before each call: a sync in flight while the
      // clock jumps can leave it a token short of full (decision 075's correction is conservative).
      clock().advance(10_000);
      const res = await t.call(
        'createApiKeyForCli',
        { orgSlug: org.slug, kind: 'live', rateLimit },
        owner.token,
      );
      expect(res.statusCode, JSON.stringify(rateLimit)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
    clock().advance(10_000);
    const k = await t.call('createApiKeyForCli', { orgSlug: org.slug, kind: 'live' }, owner.token);
    clock().advance(10_000);
    const res = await t.call(
      'updateApiKeyForCli',
      { orgSlug: org.slug, keyId: k.json().keyId, rateLimit: { perSec: -1, burst: 5 } },
      owner.token,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
    // Nothing to change is bad input too (not an empty UPDATE).
    clock().advance(10_000);
    const empty = await t.call(
      'updateApiKeyForCli',
      { orgSlug: org.slug, keyId: k.json().keyId },
      owner.token,
    );
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.code).toBe('VALIDATION_ERROR');
  });
});

describe('pruning the shared buckets', () => {
  it('deletes rows untouched for a day; the key starts again from a full bucket', async () => {
    const u = await seedUser(t.deps);
    for (let i = 0; i < 3; i++) await t.call('listMyOrgsForCli', {}, u.token);
    await t.app.close().catch(() => {}); // the last spending reaches the table
    expect(await pruneRateBuckets(t.deps.db, clock().nowMs())).toBe(0);
    clock().advance(25 * 60 * 60_000);
    expect(await pruneRateBuckets(t.deps.db, clock().nowMs())).toBeGreaterThan(0);
    const { rows } = await t.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM v1_rate_buckets');
    expect(Number(rows[0]!.n)).toBe(0);
  });
});
