import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { Db, Queryable } from './db/client.ts';
import { listen, type Unlisten } from './db/notify.ts';
import type { BatchJob, EnqueueOptions, JobDef, NewJob } from './job-defs.ts';
import { announceJobs, JOBS_CHANNEL, Wakeups } from './job-wakeups.ts';

// Background work on pg-boss: jobs live in Postgres (PGlite or a server), survive restarts, and several
// worker processes share one queue through SKIP LOCKED. Idle workers do not poll on a short timer: every
// insert NOTIFYs the job's kind (at commit when inside a transaction) with its due time, and an idle
// worker sleeps until that wake-up, the next due time it was told of, or a long fallback poll, whichever
// comes first.
//
// This module is the only one that talks to pg-boss, and it does so through pg-boss's public API only
// (insert, fetch, complete, fail, deleteJob, getJobById, purgeQueue, send, schedule): no SQL here or
// anywhere else names pg-boss's tables, so a pg-boss upgrade that changes them cannot break Pier
// silently (docs/decisions/041-queue-public-api.md; src/core/queue-sql.test.ts checks it).
//
// Beside it: job-defs.ts (what a job is), job-wakeups.ts (how idle workers sleep and are woken).

export {
  type BatchJob,
  defineJob,
  type EnqueueOptions,
  type JobContext,
  type JobDef,
  type NewJob,
} from './job-defs.ts';
export { JOBS_CHANNEL } from './job-wakeups.ts';

const CRON_POLL_SEC = 5;
/** pg-boss's job states in which a job will still run (created, retry) or is running (active). */
const LIVE_STATES = new Set(['created', 'retry', 'active']);

/** pg-boss's executeSql over a caller's transaction, so a job is written or read inside it. */
const inTx = (tx: Queryable) => ({
  executeSql: (text: string, values?: unknown[]) => tx.query(text, values),
});

/**
 * Every job's payload by name, so `deps.jobs.enqueue('mail.deliver', payload)` is type-checked. Empty here:
 * whoever lists a job in a manifest declares it (module augmentation, docs/areas.md), so the queue's type
 * names no area.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation, which needs an interface.
export interface JobPayloads {}

/** The payload a job's schema accepts (what enqueue takes), for a JobPayloads declaration. */
export type PayloadOf<J extends { schema: z.ZodType }> = z.input<J['schema']>;

/** The registry of a list of defineJob()s: `{ [name]: payload accepted by its schema }`. */
export type JobPayloadsOf<T extends readonly JobDef[]> = {
  [D in T[number] as D['name']]: z.input<D['schema']>;
};

export type JobQueueOptions = {
  /**
   * The fallback poll of an idle worker (default 5 s). Wake-ups (NOTIFY on insert, the next due job's
   * time) make workers start jobs at once; this only bounds how late a job is whose wake-up was missed
   * (a lost listening connection, a job pg-boss itself created or expired back to retry).
   */
  pollingIntervalSeconds?: number;
  /** How often schedules are checked (pg-boss default 30 s; tests use 1). */
  cronMonitorIntervalSeconds?: number;
  /** How often due schedules become jobs (pg-boss default 5 s; tests use 1). */
  cronWorkerIntervalSeconds?: number;
};

export class JobQueue<P extends object = Record<string, unknown>, C = unknown> {
  readonly boss: PgBoss;
  readonly pollingIntervalSeconds: number;
  readonly #defs = new Map<string, JobDef>();
  readonly #db: Db;
  #context: { value: C } | undefined;
  #started = false;
  #stopping = false;
  readonly #wakeups = new Wakeups(() => this.#stopping);
  readonly #loops: Promise<void>[] = [];
  #unlisten: Unlisten | undefined;

  // Both drivers go through the app's own connection (PGlite's single one, or the pg pool), so the queue
  // needs no second connection string and closing the queue never closes the app's database.
  constructor(db: Db, opts: JobQueueOptions = {}) {
    this.#db = db;
    const cron = {
      ...(opts.cronMonitorIntervalSeconds
        ? { cronMonitorIntervalSeconds: opts.cronMonitorIntervalSeconds }
        : {}),
      ...(opts.cronWorkerIntervalSeconds
        ? { cronWorkerIntervalSeconds: opts.cronWorkerIntervalSeconds }
        : {}),
    };
    this.boss = new PgBoss({
      schema: 'pgboss',
      supervise: true,
      schedule: true,
      migrate: true,
      ...cron,
      db: {
        executeSql:
          db.kind === 'pglite'
            ? // pg-boss sends multi-statement transactions without parameters; PGlite runs those with exec.
              async (text: string, values?: unknown[]) => {
                if (values?.length) return db.pglite!.query(text, values);
                const results = await db.pglite!.exec(text);
                return results[results.length - 1] ?? { rows: [] };
              }
            : (text: string, values?: unknown[]) => db.pool!.query(text, values),
      },
    });
    this.boss.on('error', () => {});
    this.pollingIntervalSeconds = opts.pollingIntervalSeconds ?? 5;
  }

  /** What every handler receives as ctx.deps (createDeps binds the app's Deps). */
  bind(context: C): void {
    this.#context = { value: context };
  }

  register(defs: readonly JobDef[]): void {
    for (const d of defs) this.#defs.set(d.name, d);
  }

  async start(): Promise<void> {
    if (this.#started) return;
    await this.boss.start();
    for (const def of this.#defs.values()) await this.boss.createQueue(def.name);
    this.#started = true;
  }

  /** Starts consuming every registered job (the worker role). */
  async work(): Promise<void> {
    const context = this.#context;
    if (!context) throw new Error('JobQueue.bind(deps) must be called before work().');
    for (const def of this.#defs.values())
      if (!def.handle && !def.handleMany)
        throw new Error(`Job '${def.name}' has neither handle nor handleMany.`);
    this.#stopping = false;
    this.#unlisten ??= await listen(
      this.#db,
      this.#db.pool?.options.connectionString,
      JOBS_CHANNEL,
      (payload) => this.#wakeups.heard(payload),
    );
    for (const def of this.#defs.values()) {
      if (!def.dueTimes) continue;
      try {
        for (const at of await def.dueTimes(context.value)) this.#wakeups.remember(def.name, at.getTime());
      } catch {
        // The fallback poll finds them.
      }
    }
    for (const def of this.#defs.values())
      for (let i = 0; i < (def.concurrency ?? 1); i++) this.#loops.push(this.#loop(def, context.value));
  }

  /** One worker of a kind: claim a batch, run it, claim again at once while there is work, else idle. */
  async #loop(def: JobDef, deps: C): Promise<void> {
    const deleting = def.handleMany !== undefined && def.consume === 'delete';
    const batchSize = def.batchSize ?? (def.handleMany ? 100 : 1);
    const me = this.#wakeups.join(def.name);
    const fallbackMs = (def.cronOnly ? CRON_POLL_SEC : this.pollingIntervalSeconds) * 1000;
    try {
      while (!this.#stopping) {
        me.announced = Number.POSITIVE_INFINITY;
        let jobs: { id: string; retryCount: number; data: unknown }[] = [];
        try {
          jobs = deleting
            ? await this.#claimByDelete(def.name, batchSize)
            : await this.#fetch(def.name, batchSize);
        } catch {
          jobs = [];
        }
        if (jobs.length) {
          await (def.handleMany ? this.#runMany(def, jobs, deps, deleting) : this.#runEach(def, jobs, deps));
          continue;
        }
        // A job announced during the claim may be one it did not see: sleep no longer than until it is due
        // (a job due now: claim again at once).
        const ms = Math.min(this.#wakeups.idleMs(def.name, fallbackMs), me.announced - Date.now());
        if (ms > 0) await this.#wakeups.sleep(me, ms);
      }
    } finally {
      this.#wakeups.leave(def.name, me);
    }
  }

  /** Oldest first, without pg-boss's priority sort (Pier sets no priorities). */
  #fetch(name: string, batchSize: number, db?: Queryable): Promise<BatchJob<unknown>[]> {
    return this.boss.fetch(name, {
      batchSize,
      includeMetadata: true,
      priority: false,
      ...(db ? { db: inTx(db) } : {}),
    });
  }

  /**
   * consume: 'delete' — the claimed jobs are deleted before the handler runs; the kind's own rows are the
   * record (docs/decisions/023). pg-boss's fetch and deleteJob in one transaction, so no claim is left
   * half done (`active`) by a process that dies between them.
   */
  #claimByDelete(name: string, batchSize: number): Promise<BatchJob<unknown>[]> {
    return this.#db.transaction(async (tx) => {
      const jobs = await this.#fetch(name, batchSize, tx);
      if (jobs.length)
        await this.boss.deleteJob(
          name,
          jobs.map((j) => j.id),
          { db: inTx(tx) },
        );
      return jobs;
    });
  }

  async #runMany(def: JobDef, jobs: BatchJob<unknown>[], deps: C, deleting: boolean): Promise<void> {
    const ids = jobs.map((j) => j.id);
    try {
      const batch = jobs.map((j) => ({ id: j.id, retryCount: j.retryCount, data: def.schema.parse(j.data) }));
      await def.handleMany!(batch, { deps });
      if (!deleting) await this.boss.complete(def.name, ids);
    } catch {
      if (deleting) return;
      await this.boss.fail(def.name, ids).catch(() => {});
      await this.#announceRetries(def, jobs);
    }
  }

  /**
   * handle kinds: each job of the batch completes or fails (and is retried) on its own. As with pg-boss's
   * own workers, a handler running past the job's expireInSeconds fails it, and the error is its output.
   */
  async #runEach(def: JobDef, jobs: BatchJob<unknown>[], deps: C): Promise<void> {
    const limitMs = (def.expireInSeconds ?? 15 * 60) * 1000;
    const results = await Promise.allSettled(
      jobs.map(async (j) => {
        let timer: NodeJS.Timeout | undefined;
        const ac = new AbortController();
        const expired = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const err = new Error(`handler exceeded ${limitMs} ms`);
            ac.abort(err);
            reject(err);
          }, limitMs);
        });
        try {
          const ctx = { id: j.id, retryCount: j.retryCount, deps, signal: ac.signal };
          const run = def.handle!(def.schema.parse(j.data), ctx);
          await Promise.race([run, expired]);
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const done = jobs.filter((_, i) => results[i]!.status === 'fulfilled').map((j) => j.id);
    if (done.length) await this.boss.complete(def.name, done).catch(() => {});
    const failed: BatchJob<unknown>[] = [];
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled') continue;
      const err = r.reason as Error;
      failed.push(jobs[i]!);
      await this.boss
        .fail(def.name, jobs[i]!.id, { name: err?.name, message: String(err?.message ?? err) })
        .catch(() => {});
    }
    await this.#announceRetries(def, failed);
  }

  /**
   * A failed job with retries left is due again when pg-boss says (its back-off has a random part), and
   * no insert announces it: read its due time back and announce it, so idle workers everywhere wake then.
   */
  async #announceRetries(def: JobDef, failed: BatchJob<unknown>[]): Promise<void> {
    const limit = def.retry?.limit ?? 0;
    const retried = failed.filter((j) => j.retryCount < limit);
    if (!retried.length) return;
    try {
      const due: { name: string; startAfter: Date }[] = [];
      for (const j of retried) {
        const job = await this.boss.getJobById(def.name, j.id);
        if (job?.state === 'retry') due.push({ name: def.name, startAfter: new Date(job.startAfter) });
      }
      await announceJobs(this.#db, due);
    } catch {
      // The fallback poll finds them.
    }
  }

  /**
   * Queues jobs with one INSERT (per chunk), inside the caller's transaction when `tx` is given, so the
   * jobs exist exactly when the rows that need them do. Returns the jobs' ids in order.
   */
  async insert<K extends keyof P & string>(
    jobs: NewJob<K, P[K]>[],
    opts: { tx?: Queryable } = {},
  ): Promise<string[]> {
    const ids: string[] = [];
    const rows = jobs.map((j) => {
      const def = this.#def(j.name);
      const id = j.id ?? crypto.randomUUID();
      ids.push(id);
      return {
        id,
        name: j.name,
        data: def.schema.parse(j.data) as object,
        // pg-boss reads a string ending in Z as a time (and anything else as an interval from now).
        ...(j.startAfter ? { startAfter: j.startAfter.toISOString() } : {}),
        retryLimit: def.retry?.limit ?? 0,
        retryDelay: def.retry?.delaySec ?? 1,
        retryBackoff: def.retry?.backoff ?? false,
        expireInSeconds: def.expireInSeconds ?? 15 * 60,
      };
    });
    if (!rows.length) return ids;
    // One statement for the whole list (its rows travel as one JSON parameter).
    await this.boss.insert(rows, opts.tx ? { db: inTx(opts.tx) } : {});
    await announceJobs(opts.tx ?? this.#db, jobs);
    return ids;
  }

  /**
   * Which of these jobs of a kind still exist and will run or are running (pg-boss states created, retry,
   * active), read through pg-boss's getJobById (inside `tx` when given).
   */
  async liveJobs(name: keyof P & string, ids: string[], opts: { tx?: Queryable } = {}): Promise<Set<string>> {
    const live = new Set<string>();
    const db = { includeArchive: false, ...(opts.tx ? { db: inTx(opts.tx) } : {}) };
    for (const id of ids) {
      const job = await this.boss.getJobById(name, id, db);
      if (job && LIVE_STATES.has(job.state)) live.add(id);
    }
    return live;
  }

  /** Deletes a kind's jobs that have not started (benchmarks and tests start from an empty queue). */
  async purge(name: keyof P & string): Promise<void> {
    await this.boss.purgeQueue(name);
  }

  async enqueue<K extends keyof P & string>(
    name: K,
    data: P[K],
    opts: EnqueueOptions = {},
  ): Promise<string | null> {
    const def = this.#def(name);
    // Validated when sent, so a bad payload fails the caller instead of a worker later.
    const id = await this.boss.send(name, def.schema.parse(data) as object, {
      id: opts.id,
      startAfter: opts.startAfter,
      singletonKey: opts.singletonKey,
      retryLimit: def.retry?.limit ?? 0,
      retryDelay: def.retry?.delaySec ?? 1,
      retryBackoff: def.retry?.backoff ?? false,
      expireInSeconds: def.expireInSeconds ?? 15 * 60,
    });
    if (id) await announceJobs(this.#db, [{ name, startAfter: opts.startAfter ?? null }]);
    return id;
  }

  /** A cron schedule (UTC, minute precision), stored in the database: one per name, replaced on each call. */
  async schedule<K extends keyof P & string>(name: K, cron: string, data: P[K]): Promise<void> {
    const def = this.#def(name);
    await this.boss.schedule(name, cron, def.schema.parse(data) as object, {
      tz: 'UTC',
      retryLimit: def.retry?.limit ?? 0,
      retryDelay: def.retry?.delaySec ?? 1,
      retryBackoff: def.retry?.backoff ?? false,
      expireInSeconds: def.expireInSeconds ?? 15 * 60,
    });
  }

  /** Removes a schedule (e.g. one a configuration turned off); nothing happens when there is none. */
  async unschedule<K extends keyof P & string>(name: K): Promise<void> {
    await this.boss.unschedule(name);
  }

  #def(name: string): JobDef {
    const def = this.#defs.get(name);
    if (!def) throw new Error(`Unknown job '${name}'.`);
    return def;
  }

  /** Waits for running handlers (up to timeoutMs), then stops polling. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (!this.#started) return;
    this.#stopping = true;
    this.#wakeups.wakeAll();
    // Batch workers finish the batch in hand (its outcomes recorded, its jobs completed) before stopping.
    const loops = Promise.all(this.#loops.splice(0));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([loops, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    await this.#unlisten?.();
    this.#unlisten = undefined;
    await this.boss.stop({ graceful: true, wait: true, close: true, timeout: timeoutMs });
    this.#started = false;
  }
}
