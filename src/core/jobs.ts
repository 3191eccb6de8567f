import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { Db, Queryable } from './db/client.ts';
import { listen, type Unlisten } from './db/notify.ts';
import { positionalInserts } from './db/positional.ts';

// Background work on pg-boss: jobs live in Postgres (PGlite or a server), survive restarts, and several
// worker processes share one queue through SKIP LOCKED. Idle workers do not poll on a short timer: every
// insert NOTIFYs the job's kind (at commit when inside a transaction), and an idle worker sleeps until
// that wake-up, its kind's next due job, or a long fallback poll, whichever comes first.

export type JobContext<C = unknown> = {
  id: string;
  retryCount: number;
  /** What the process bound with JobQueue.bind() (the app's Deps); a job names only what it uses. */
  deps: C;
  /**
   * Aborted when the handler runs past the job's expireInSeconds: a handler running a child process
   * (ffmpeg, a browser) kills it, so nothing outlives the job. Absent when a test calls handle() itself.
   */
  signal?: AbortSignal;
};

/** One job of a batch handed to handleMany. */
export type BatchJob<T> = { id: string; retryCount: number; data: T };

export type JobDef<S extends z.ZodType = z.ZodType, N extends string = string, C = unknown> = {
  name: N;
  schema: S;
  // Method syntax on purpose: it lets a list of jobs with different payloads share one JobDef[] type.
  /** Runs one job (give handle or handleMany). */
  handle?(data: z.output<S>, ctx: JobContext<C>): Promise<void>;
  /**
   * Runs a whole batch: the worker claims up to batchSize jobs of this kind in one statement and polls
   * again at once while it finds work. The batch completes when this resolves and fails (with pg-boss
   * retries) when it throws, so settle each job's own failures inside.
   */
  handleMany?(jobs: BatchJob<z.output<S>>[], ctx: { deps: C }): Promise<void>;
  /**
   * handleMany kinds only. 'complete' (default): claimed jobs go `active` and are completed (or failed and
   * retried) after the handler. 'delete': the claiming statement deletes them — two row updates fewer per
   * job, but a process dying mid-batch loses the batch's jobs, so only for kinds whose own rows let a
   * sweeper re-queue the work (mail.deliver; docs/decisions/023).
   */
  consume?: 'complete' | 'delete';
  /** Only started by a schedule: its workers poll every 5 s instead of every pollingIntervalSeconds. */
  cronOnly?: boolean;
  retry?: { limit: number; delaySec: number; backoff?: boolean };
  /** How many of this job one worker process runs at once. */
  concurrency?: number;
  /**
   * Jobs fetched per poll and run together (default 1). Fetching and completing in batches saves queue
   * round trips for many small jobs; the handler should settle failures itself, since a throw fails the
   * whole batch.
   */
  batchSize?: number;
  expireInSeconds?: number;
};

/** Keeps the job's literal name, so a registry derived from a list of jobs knows each name's payload. */
export function defineJob<const N extends string, S extends z.ZodType, C = unknown>(
  def: JobDef<S, N, C>,
): JobDef<S, N, C> {
  return def;
}

export type EnqueueOptions = { startAfter?: Date; singletonKey?: string; id?: string };

/** A job for JobQueue.insert(); `id` lets the caller store the job's id beside its own rows. */
export type NewJob<K extends string = string, T = unknown> = {
  name: K;
  data: T;
  id?: string;
  startAfter?: Date | null;
};

const CRON_POLL_SEC = 5;
/** A running worker loop: the earliest job announced since its last claim, and while it sleeps, until when. */
type Worker = { announced: number; until: number; wake: (() => void) | null };

/** The channel on which inserts announce a job kind; every worker process of the database listens. */
export const JOBS_CHANNEL = 'pier_jobs';
/** An idle worker's nap when a job is due but was not claimable (another worker holds it). */
const BUSY_RETRY_MS = 250;
/** A worker due to wake this little after a new job's due time is left asleep (clocks round). */
const WAKE_SLACK_MS = 100;

// Claiming by deleting (JobDef.consume). Earliest due first, in the order of pg-boss's own partial index
// (name, start_after): pg-boss's fetch sorts every ready job by priority and age on each claim, which on
// a deep queue costs more than the batch itself; Pier does not use priorities.
const CLAIM_BY_DELETE_SQL = `
DELETE FROM pgboss.job WHERE name = $1 AND id IN (
  SELECT id FROM pgboss.job
  WHERE name = $1 AND state < 'active' AND start_after < now()
  ORDER BY start_after
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
RETURNING id, data, retry_count AS "retryCount"`;
/** pg-boss's default retention of a job that has not run (kept this long after its start time). */
const KEEP_DAYS = 14;

/** A jobs registry maps names to payload types, so enqueue('mail.deliver', payload) is type-checked. */
export type JobPayloads = Record<string, unknown>;

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

export class JobQueue<P extends JobPayloads = JobPayloads, C = unknown> {
  readonly boss: PgBoss;
  readonly pollingIntervalSeconds: number;
  readonly #defs = new Map<string, JobDef>();
  readonly #db: Db;
  #context: { value: C } | undefined;
  #started = false;
  #stopping = false;
  readonly #loops: Promise<void>[] = [];
  /** Each kind's running workers, so a NOTIFY reaches them whether they sleep or are claiming. */
  readonly #workers = new Map<string, Set<Worker>>();
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
      (payload) => {
        // '<kind>' for jobs due now, '<kind>@<epoch ms>' for jobs due later (see #announce).
        const at = payload.lastIndexOf('@');
        if (at === -1) this.#wake(payload);
        else this.#wake(payload.slice(0, at), Number(payload.slice(at + 1)));
      },
    );
    for (const def of this.#defs.values())
      for (let i = 0; i < (def.concurrency ?? 1); i++) this.#loops.push(this.#loop(def, context.value));
  }

  /** One worker of a kind: claim a batch, run it, claim again at once while there is work, else idle. */
  async #loop(def: JobDef, deps: C): Promise<void> {
    const deleting = def.handleMany !== undefined && def.consume === 'delete';
    const batchSize = def.batchSize ?? (def.handleMany ? 100 : 1);
    const me: Worker = { announced: Number.POSITIVE_INFINITY, until: 0, wake: null };
    const workers = this.#workers.get(def.name) ?? new Set();
    this.#workers.set(def.name, workers);
    workers.add(me);
    try {
      while (!this.#stopping) {
        me.announced = Number.POSITIVE_INFINITY;
        let jobs: { id: string; retryCount: number; data: unknown }[] = [];
        try {
          jobs = deleting
            ? (await this.#db.query<(typeof jobs)[number]>(CLAIM_BY_DELETE_SQL, [def.name, batchSize])).rows
            : await this.boss.fetch(def.name, { batchSize, includeMetadata: true });
        } catch {
          jobs = [];
        }
        if (jobs.length) {
          await (def.handleMany ? this.#runMany(def, jobs, deps, deleting) : this.#runEach(def, jobs, deps));
          continue;
        }
        // A job announced during the claim or the lookup may be one neither saw: sleep no longer than until
        // it is due (a job due now: claim again at once).
        const ms = Math.min(await this.#idleMs(def), me.announced - Date.now());
        if (ms > 0) await this.#sleep(me, ms);
      }
    } finally {
      workers.delete(me);
    }
  }

  async #runMany(def: JobDef, jobs: BatchJob<unknown>[], deps: C, deleting: boolean): Promise<void> {
    const ids = jobs.map((j) => j.id);
    try {
      const batch = jobs.map((j) => ({ id: j.id, retryCount: j.retryCount, data: def.schema.parse(j.data) }));
      await def.handleMany!(batch, { deps });
      if (!deleting) await this.boss.complete(def.name, ids);
    } catch {
      if (!deleting) await this.boss.fail(def.name, ids).catch(() => {});
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
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled') continue;
      const err = r.reason as Error;
      await this.boss
        .fail(def.name, jobs[i]!.id, { name: err?.name, message: String(err?.message ?? err) })
        .catch(() => {});
    }
  }

  /** How long an idle worker sleeps: until its kind's next due job (by the database clock), at most the fallback. */
  async #idleMs(def: JobDef): Promise<number> {
    const fallback = (def.cronOnly ? CRON_POLL_SEC : this.pollingIntervalSeconds) * 1000;
    try {
      const { rows } = await this.#db.query<{ ms: number | null }>(
        `SELECT (EXTRACT(EPOCH FROM min(start_after) - now()) * 1000)::float8 AS ms
         FROM pgboss.job WHERE name = $1 AND state < 'active'`,
        [def.name],
      );
      const ms = rows[0]?.ms;
      if (ms === null || ms === undefined) return fallback;
      return Math.min(fallback, Math.max(BUSY_RETRY_MS, Math.ceil(ms)));
    } catch {
      return fallback;
    }
  }

  #sleep(me: Worker, ms: number): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => me.wake?.(), ms);
      me.until = Date.now() + ms;
      me.wake = () => {
        clearTimeout(timer);
        me.wake = null;
        resolve();
      };
    });
  }

  /**
   * A NOTIFY for a kind (or stop): its idle workers claim again. A job due later (`due`, epoch ms) only
   * wakes workers that would sleep past it, so a burst of scheduled jobs costs idle workers nothing.
   */
  #wake(name: string, due?: number): void {
    const at = due === undefined || Number.isNaN(due) ? 0 : due;
    for (const w of this.#workers.get(name) ?? []) {
      w.announced = Math.min(w.announced, at);
      if (w.wake && at + WAKE_SLACK_MS < w.until) w.wake();
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
    const runner: Queryable = opts.tx ?? this.#db;
    const ids: string[] = [];
    const rows = jobs.map((j) => {
      const def = this.#def(j.name);
      const id = j.id ?? crypto.randomUUID();
      ids.push(id);
      const startAfter = j.startAfter?.toISOString() ?? null;
      return [
        id,
        j.name,
        JSON.stringify(def.schema.parse(j.data)),
        startAfter,
        def.retry?.limit ?? 0,
        def.retry?.delaySec ?? 1,
        def.retry?.backoff ?? false,
        def.expireInSeconds ?? 15 * 60,
        startAfter,
        'standard',
      ];
    });
    const statements = positionalInserts(
      'pgboss.job',
      [
        'id',
        'name',
        'data',
        'start_after',
        'retry_limit',
        'retry_delay',
        'retry_backoff',
        'expire_in',
        'keep_until',
        'policy',
      ],
      rows,
      {
        exprs: {
          data: (p) => `${p}::jsonb`,
          start_after: (p) => `COALESCE(${p}::timestamptz, now())`,
          expire_in: (p) => `${p}::int * interval '1 second'`,
          keep_until: (p) => `COALESCE(${p}::timestamptz, now()) + interval '${KEEP_DAYS} days'`,
        },
      },
    );
    for (const st of statements) await runner.query(st.text, st.params);
    await this.#announce(runner, jobs);
    return ids;
  }

  /**
   * NOTIFYs the kinds just queued, with the earliest due time when every job of a kind is due later;
   * inside a transaction Postgres delivers it at commit, never on rollback.
   */
  async #announce(runner: Queryable, jobs: { name: string; startAfter?: Date | null }[]): Promise<void> {
    const earliest = new Map<string, number>();
    for (const j of jobs) {
      const due = j.startAfter?.getTime() ?? 0;
      earliest.set(j.name, Math.min(earliest.get(j.name) ?? due, due));
    }
    const now = Date.now();
    const payloads = [...earliest].map(([name, due]) => (due > now ? `${name}@${due}` : name));
    if (payloads.length)
      await runner.query('SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n', [JOBS_CHANNEL, payloads]);
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
    if (id) await this.#announce(this.#db, [{ name, startAfter: opts.startAfter ?? null }]);
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
    for (const name of this.#workers.keys()) this.#wake(name);
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
