import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { onPostgres, openTestDb } from '../../test/harness.ts';
import type { Db } from './db/client.ts';
import { defineJob, type JobPayloadsOf, JobQueue, type JobQueueOptions } from './jobs.ts';

// The queue itself, on a bare database (PGlite, or PostgreSQL in the postgres project): the same
// pg-boss tables and SQL an app uses, without an app around them.

type Run = { job: string; id: string; data: unknown; retryCount: number; at: number; worker: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function jobsFor(runs: Run[]) {
  const echo = defineJob({
    name: 'test.echo',
    schema: z.object({ n: z.number().int(), tag: z.string().default('none') }),
    handle: async (
      data,
      { id, retryCount, deps }: { id: string; retryCount: number; deps: { worker: string } },
    ) => {
      runs.push({ job: 'test.echo', id, data, retryCount, at: Date.now(), worker: deps.worker });
    },
  });
  const flaky = defineJob({
    name: 'test.flaky',
    schema: z.object({}),
    retry: { limit: 2, delaySec: 1, backoff: true },
    handle: async (_data, { id, retryCount }) => {
      runs.push({ job: 'test.flaky', id, data: null, retryCount, at: Date.now(), worker: '' });
      throw new Error('always fails');
    },
  });
  return [echo, flaky] as const;
}

type Registry = JobPayloadsOf<ReturnType<typeof jobsFor>>;

async function openQueue(db: Db, runs: Run[], worker: string, opts: JobQueueOptions = {}) {
  const q = new JobQueue<Registry, { worker: string }>(db, opts);
  q.register(jobsFor(runs));
  q.bind({ worker });
  await q.start();
  return q;
}

describe('JobQueue', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let q: JobQueue<Registry, { worker: string }>;
  const runs: Run[] = [];
  beforeAll(async () => {
    ({ db, drop } = await openTestDb());
    // A fallback poll far longer than any wait below: jobs start on wake-ups (NOTIFY, due times) alone.
    q = await openQueue(db, runs, 'w1', { pollingIntervalSeconds: 60 });
    await q.work();
  });
  afterAll(async () => {
    await q?.stop(2000);
    await db?.close();
    await drop?.();
  });

  it('runs an enqueued job with the payload its schema parsed, woken at once', async () => {
    await sleep(300); // the workers' first claims found nothing: they are idle now
    const sent = Date.now();
    const id = await q.enqueue('test.echo', { n: 1 });
    const run = await until('echo', () => runs.find((r) => r.id === id));
    expect(run.data).toEqual({ n: 1, tag: 'none' });
    expect(run.at - sent).toBeLessThan(2000);
    expect(run.worker).toBe('w1');
    // A payload the schema refuses fails the caller at once, not a worker later.
    // @ts-expect-error n must be a number
    await expect(q.enqueue('test.echo', { n: 'one' })).rejects.toThrow();
    // @ts-expect-error no job has this name
    await expect(q.enqueue('test.nope', {})).rejects.toThrow(/Unknown job/);
  });

  it('holds a job until its startAfter', async () => {
    const startAfter = new Date(Date.now() + 1500);
    const id = await q.enqueue('test.echo', { n: 2 }, { startAfter });
    const run = await until('delayed echo', () => runs.find((r) => r.id === id));
    expect(run.at).toBeGreaterThanOrEqual(startAfter.getTime() - 50);
    // The idle worker slept until the job was due, not until its 60 s fallback poll.
    expect(run.at).toBeLessThan(startAfter.getTime() + 1000);
  });

  it('wakes an idle worker when a transaction that queued a job commits, not before', async () => {
    await sleep(300);
    let id = '';
    let committedAt = 0;
    await db.transaction(async (tx) => {
      [id] = (await q.insert([{ name: 'test.echo', data: { n: 3 } }], { tx })) as [string];
      await sleep(500);
      expect(runs.find((r) => r.id === id)).toBeUndefined();
      committedAt = Date.now();
    });
    const run = await until('echo after commit', () => runs.find((r) => r.id === id));
    expect(run.at - committedAt).toBeLessThan(2000);
  });

  it('retries a failing job with growing delays, then marks it failed', async () => {
    const id = (await q.enqueue('test.flaky', {}))!;
    const job = await until(
      'failed state',
      async () => {
        const j = await q.boss.getJobById('test.flaky', id);
        return j?.state === 'failed' ? j : undefined;
      },
      20_000,
    );
    expect(job.state).toBe('failed');
    const attempts = runs.filter((r) => r.id === id);
    expect(attempts.map((a) => a.retryCount)).toEqual([0, 1, 2]);
    // Back-off: the first retry waits at least delaySec, the second at least twice that.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(2000);
  });

  it('stop() waits for a running handler before it resolves', async () => {
    const events: string[] = [];
    let release!: () => void;
    const q2 = new JobQueue(db);
    q2.register([
      defineJob({
        name: 'test.slow',
        schema: z.object({}),
        handle: async () => {
          events.push('started');
          await new Promise<void>((r) => {
            release = r;
          });
          await sleep(300);
          events.push('finished');
        },
      }),
    ]);
    q2.bind(undefined);
    await q2.start();
    await q2.work();
    const id = (await q2.enqueue('test.slow', {}))!;
    await until('slow start', () => events.includes('started'));
    const stopped = q2.stop(10_000).then(() => events.push('stopped'));
    release();
    await stopped;
    expect(events).toEqual(['started', 'finished', 'stopped']);
    const job = await q.boss.getJobById('test.slow', id);
    expect(job?.state).toBe('completed');
  });
});

describe('JobQueue schedules', () => {
  it('turns a cron schedule into jobs', async () => {
    const { db, drop } = await openTestDb();
    const runs: Run[] = [];
    // pg-boss checks schedules every cronMonitorIntervalSeconds (default 30 s) and fires a schedule whose
    // last cron time is under a minute old; with '* * * * *' that is every check, so 1 s intervals make
    // the first run arrive within a few seconds instead of up to a minute.
    const q = await openQueue(db, runs, 'cron', {
      cronMonitorIntervalSeconds: 1,
      cronWorkerIntervalSeconds: 1,
    });
    try {
      await q.work();
      await q.schedule('test.echo', '* * * * *', { n: 42, tag: 'cron' });
      expect(await q.boss.getSchedules()).toMatchObject([{ name: 'test.echo', cron: '* * * * *' }]);
      const run = await until('cron run', () => runs.find((r) => r.job === 'test.echo'), 20_000);
      expect(run.data).toEqual({ n: 42, tag: 'cron' });
      // pg-boss debounces a schedule to once a minute (singleton key), so a second check adds nothing
      // unless a new minute began meanwhile (then that minute's run is due). Near a minute's turn the run of
      // the minute just ended can still be fired, so one more run than minutes spanned is allowed; without
      // the debounce, checks every second would add two or three runs in these 2.5 s.
      await sleep(2500);
      const minutes = Math.floor(Date.now() / 60_000) - Math.floor(run.at / 60_000) + 1;
      expect(runs.filter((r) => r.job === 'test.echo').length).toBeLessThanOrEqual(minutes + 1);
    } finally {
      await q.stop(2000);
      await db.close();
      await drop();
    }
  });
});

describe.skipIf(!onPostgres)('JobQueue across processes (PostgreSQL)', () => {
  it('shares one queue between two workers; every job runs exactly once', async () => {
    const a = await openTestDb();
    // A second pool on the same database stands in for a second worker process.
    const { openDb } = await import('./db/client.ts');
    const dbB = await openDb({ databaseUrl: a.url!, poolSize: 3 });
    const runs: Run[] = [];
    const qa = await openQueue(a.db, runs, 'A', { pollingIntervalSeconds: 60 });
    const qb = await openQueue(dbB, runs, 'B', { pollingIntervalSeconds: 60 });
    try {
      const ids = new Set<string>();
      for (let n = 0; n < 12; n++) ids.add((await qa.enqueue('test.echo', { n }))!);
      // Both start working only once all jobs are queued, so neither has drained it alone.
      await Promise.all([qa.work(), qb.work()]);
      await until('all jobs', () => runs.length >= ids.size, 20_000);
      await sleep(1000); // a duplicate run would show up here
      expect(runs.map((r) => r.id).sort()).toEqual([...ids].sort());
      // Which worker claimed how many of the 12 is the scheduler's choice (a CI run once saw A take them
      // all); that B serves the shared queue is what the next part proves.
      // Only B works now: a job A queues reaches B's idle worker through NOTIFY on its own connection.
      await qa.stop(2000);
      await sleep(300);
      const sent = Date.now();
      const [id] = await qa.insert([{ name: 'test.echo', data: { n: 100 } }]);
      const run = await until('cross-process wake-up', () => runs.find((r) => r.id === id));
      expect(run.worker).toBe('B');
      expect(run.at - sent).toBeLessThan(2000);
    } finally {
      await qa.stop(2000);
      await qb.stop(2000);
      await dbB.close();
      await a.db.close();
      await a.drop();
    }
  });
});

describe('JobQueue wake-ups', () => {
  it('jobs queued for later do not wake idle workers before they are due', async () => {
    const { db, drop } = await openTestDb();
    const ran: number[] = [];
    const q = new JobQueue(db, { pollingIntervalSeconds: 60 });
    q.register([
      defineJob({
        name: 'test.later',
        schema: z.object({ n: z.number() }),
        consume: 'delete',
        handleMany: async (jobs) => {
          ran.push(...jobs.map((j) => j.data.n));
        },
      }),
    ]);
    q.bind(undefined);
    await q.start();
    // Every claim is a pg-boss fetch.
    let fetches = 0;
    const fetch = q.boss.fetch.bind(q.boss);
    q.boss.fetch = ((...a: Parameters<typeof fetch>) => {
      fetches++;
      return fetch(...a);
    }) as typeof fetch;
    try {
      await q.work();
      await sleep(300);
      const claims = () => fetches;
      const before = claims();
      const later = new Date(Date.now() + 2000);
      for (let n = 0; n < 20; n++) await q.insert([{ name: 'test.later', data: { n }, startAfter: later }]);
      await sleep(300);
      // The first announcement moves the idle worker's wake-up (it would have slept 60 s) to `later`
      // without a claim; the other nineteen do not bring it forward.
      expect(claims() - before).toBeLessThanOrEqual(1);
      await until('due jobs', () => ran.length === 20);
      expect(Date.now()).toBeGreaterThanOrEqual(later.getTime() - 50);
    } finally {
      await q.stop(2000);
      await db.close();
      await drop();
    }
  });
});

describe('JobQueue handleMany', () => {
  it('hands batches of up to batchSize jobs to the handler, claimed in one go, and polls again at once', async () => {
    const { db, drop } = await openTestDb();
    const batches: number[][] = [];
    let failing = true;
    const q = new JobQueue(db, { pollingIntervalSeconds: 2 });
    q.register([
      defineJob({
        name: 'test.many',
        schema: z.object({ n: z.number() }),
        batchSize: 5,
        handleMany: async (jobs) => {
          batches.push(jobs.map((j) => j.data.n));
        },
      }),
      defineJob({
        name: 'test.many-fail',
        schema: z.object({}),
        batchSize: 5,
        handleMany: async () => {
          if (failing) throw new Error('boom');
        },
      }),
    ]);
    q.bind(undefined);
    await q.start();
    try {
      // Inserted in one statement before the worker starts, so the worker finds a deep queue.
      const ids = await q.insert(Array.from({ length: 12 }, (_, n) => ({ name: 'test.many', data: { n } })));
      expect(ids).toHaveLength(12);
      const [bad] = await q.insert([{ name: 'test.many-fail', data: {} }]);
      const t0 = Date.now();
      await q.work();
      await until('all batches', () => batches.flat().length >= 12);
      // Three batches back to back: a busy worker does not wait out its 2 s polling interval.
      expect(Date.now() - t0).toBeLessThan(1800);
      expect(batches.map((b) => b.length)).toEqual([5, 5, 2]);
      expect(batches.flat().sort((x, y) => x - y)).toEqual([...Array(12).keys()]);
      for (const id of ids) expect((await q.boss.getJobById('test.many', id))?.state).toBe('completed');
      // A throwing batch fails its jobs (pg-boss retries them when the job has retries).
      await until(
        'failed batch',
        async () => (await q.boss.getJobById('test.many-fail', bad!))?.state === 'failed',
      );
      failing = false;
      // A job inside a transaction that rolls back never exists.
      await db
        .transaction(async (tx) => {
          await q.insert([{ name: 'test.many', data: { n: 99 } }], { tx });
          throw new Error('rollback');
        })
        .catch(() => {});
      await sleep(2500);
      expect(batches.flat()).not.toContain(99);
    } finally {
      await q.stop(2000);
      await db.close();
      await drop();
    }
  }, 60_000);
});
