import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../test/harness.ts';
import { ManualClock } from '../core/clock.ts';
import type { Db } from '../core/db/client.ts';
import { TokenBuckets } from '../core/rate-limit/token-buckets.ts';

// The in-memory token buckets and their sync: two TokenBuckets on one database stand for two API nodes.

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db, drop } = await openTestDb());
});
afterAll(async () => {
  await db?.close();
  await drop?.();
});

const rule = { perSec: 1, burst: 3 };
const manual = { syncMs: 0 };

describe('v1 token buckets in memory', () => {
  it('refuses past the burst with a Retry-After, per key, and refills as the clock moves', async () => {
    const clock = new ManualClock(1_000_000);
    const b = new TokenBuckets(db, clock, manual);
    try {
      const taken = [];
      for (let i = 0; i < 4; i++) taken.push(await b.take('k1', rule));
      expect(taken.map((r) => r.allowed)).toEqual([true, true, true, false]);
      expect(taken.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
      expect(taken[3]!.retryAfterSec).toBe(1);
      expect((await b.take('k2', rule)).allowed).toBe(true);
      clock.advance(1000);
      expect((await b.take('k1', rule)).allowed).toBe(true);
      expect((await b.take('k1', rule)).allowed).toBe(false);
      clock.advance(10_000);
      expect((await b.take('k1', rule)).remaining).toBe(2);
    } finally {
      await b.close();
    }
  });

  it('shares spending with another node through the database', async () => {
    const clock = new ManualClock(2_000_000);
    const a = new TokenBuckets(db, clock, manual);
    const b = new TokenBuckets(db, clock, manual);
    try {
      for (let i = 0; i < 3; i++) expect((await a.take('shared', rule)).allowed).toBe(true);
      await a.sync();
      // b's first request of the key reads the shared bucket: a spent it all.
      expect((await b.take('shared', rule)).allowed).toBe(false);
      clock.advance(1000);
      expect((await b.take('shared', rule)).allowed).toBe(true);
      await b.sync();
      // a learns b's spending at its next sync after a request of the key.
      expect((await a.take('shared', rule)).allowed).toBe(true); // a's own view: one token refilled
      await a.sync();
      expect((await a.take('shared', rule)).allowed).toBe(false);
      await b.sync();
      expect((await b.take('shared', rule)).allowed).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('turns what two nodes overspent within one interval into a debt that is paid back', async () => {
    const clock = new ManualClock(3_000_000);
    const a = new TokenBuckets(db, clock, manual);
    const b = new TokenBuckets(db, clock, manual);
    try {
      await a.take('debt', rule);
      await b.take('debt', rule); // shared: 1 left
      // Both spend their own view before a sync: a thinks 2 are left, b thinks 1.
      expect((await a.take('debt', rule)).allowed).toBe(true);
      expect((await a.take('debt', rule)).allowed).toBe(true);
      expect((await b.take('debt', rule)).allowed).toBe(true);
      await a.sync();
      await b.sync();
      // 5 taken of 3: 2 owed, so a whole token is 3 s away.
      const refused = await b.take('debt', rule);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterSec).toBe(3);
      expect((await a.take('debt', rule)).allowed).toBe(false);
      await a.sync();
      clock.advance(2000);
      expect((await a.take('debt', rule)).allowed).toBe(false);
      clock.advance(1000);
      expect((await a.take('debt', rule)).allowed).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps the spending of a closing node', async () => {
    const clock = new ManualClock(4_000_000);
    const a = new TokenBuckets(db, clock, manual);
    await a.take('closing', rule);
    await a.take('closing', rule);
    await a.close();
    const b = new TokenBuckets(db, clock, manual);
    try {
      expect((await b.take('closing', rule)).remaining).toBe(0);
      expect((await b.take('closing', rule)).allowed).toBe(false);
    } finally {
      await b.close();
    }
  });

  it('answers concurrent first requests of a key with one database decision', async () => {
    const clock = new ManualClock(5_000_000);
    const a = new TokenBuckets(db, clock, manual);
    try {
      const results = await Promise.all(Array.from({ length: 5 }, () => a.take('burst', rule)));
      expect(results.filter((r) => r.allowed)).toHaveLength(3);
    } finally {
      await a.close();
    }
  });
});
