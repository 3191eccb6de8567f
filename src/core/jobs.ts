import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { Db, Queryable } from './db/client.ts';
import { positionalInserts } from './db/positional.ts';

// Background work on pg-boss: jobs live in Postgres (PGlite or a server), survive restarts, and several
// worker processes share one queue through SKIP LOCKED.

export type JobContext<C = unknown> = {
  id: string;
  retryCount: number;
  /** What the process bound with JobQueue.bind() (the app's Deps); a job names only what it uses. */
  deps: C;
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
  readonly #wake = new Set<() => void>();

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
    this.pollingIntervalSeconds = opts.pollingIntervalSeconds ?? 0.5;
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
    this.#stopping = false;
    for (const def of this.#defs.values()) {
      if (def.handleMany) {
        for (let i = 0; i < (def.concurrency ?? 1); i++)
          this.#loops.push(this.#batchLoop(def, context.value));
        continue;
      }
      const handle = def.handle;
      if (!handle) throw new Error(`Job '${def.name}' has neither handle nor handleMany.`);
      const handler = async (jobs: PgBoss.JobWithMetadata<unknown>[]) => {
        await Promise.all(
          jobs.map((job) =>
            handle(def.schema.parse(job.data), {
              id: job.id,
              retryCount: job.retryCount,
              deps: context.value,
            }),
          ),
        );
      };
      for (let i = 0; i < (def.concurrency ?? 1); i++) {
        await this.boss.work(
          def.name,
          {
            includeMetadata: true,
            batchSize: def.batchSize ?? 1,
            pollingIntervalSeconds: def.cronOnly ? CRON_POLL_SEC : this.pollingIntervalSeconds,
          },
          handler,
        );
      }
    }
  }

  /** A handleMany worker: claim a batch, run it, and poll again at once while there is work. */
  async #batchLoop(def: JobDef, deps: C): Promise<void> {
    const handleMany = def.handleMany!;
    while (!this.#stopping) {
      const deleting = def.consume === 'delete';
      let jobs: { id: string; retryCount: number; data: unknown }[] = [];
      try {
        const batchSize = def.batchSize ?? 100;
        jobs = deleting
          ? (await this.#db.query<(typeof jobs)[number]>(CLAIM_BY_DELETE_SQL, [def.name, batchSize])).rows
          : await this.boss.fetch(def.name, { batchSize, includeMetadata: true });
      } catch {
        jobs = [];
      }
      if (jobs.length) {
        const ids = jobs.map((j) => j.id);
        try {
          const batch = jobs.map((j) => ({
            id: j.id,
            retryCount: j.retryCount,
            data: def.schema.parse(j.data),
          }));
          await handleMany(batch, { deps });
          if (!deleting) await this.boss.complete(def.name, ids);
        } catch {
          if (!deleting) await this.boss.fail(def.name, ids).catch(() => {});
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#wake.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, (def.cronOnly ? CRON_POLL_SEC : this.pollingIntervalSeconds) * 1000);
        this.#wake.add(wake);
      });
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
    return ids;
  }

  async enqueue<K extends keyof P & string>(
    name: K,
    data: P[K],
    opts: EnqueueOptions = {},
  ): Promise<string | null> {
    const def = this.#def(name);
    // Validated when sent, so a bad payload fails the caller instead of a worker later.
    return this.boss.send(name, def.schema.parse(data) as object, {
      id: opts.id,
      startAfter: opts.startAfter,
      singletonKey: opts.singletonKey,
      retryLimit: def.retry?.limit ?? 0,
      retryDelay: def.retry?.delaySec ?? 1,
      retryBackoff: def.retry?.backoff ?? false,
      expireInSeconds: def.expireInSeconds ?? 15 * 60,
    });
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
    for (const wake of [...this.#wake]) wake();
    // Batch workers finish the batch in hand (its outcomes recorded, its jobs completed) before stopping.
    const loops = Promise.all(this.#loops.splice(0));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([loops, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    await this.boss.stop({ graceful: true, wait: true, close: true, timeout: timeoutMs });
    this.#started = false;
  }
}
