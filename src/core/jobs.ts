import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { Db } from './db/client.ts';

// Background work on pg-boss: jobs live in Postgres (PGlite or a server), survive restarts, and several
// worker processes share one queue through SKIP LOCKED.

export type JobContext<C = unknown> = {
  id: string;
  retryCount: number;
  /** What the process bound with JobQueue.bind() (the app's Deps); a job names only what it uses. */
  deps: C;
};

export type JobDef<S extends z.ZodType = z.ZodType, N extends string = string, C = unknown> = {
  name: N;
  schema: S;
  // Method syntax on purpose: it lets a list of jobs with different payloads share one JobDef[] type.
  handle(data: z.output<S>, ctx: JobContext<C>): Promise<void>;
  retry?: { limit: number; delaySec: number; backoff?: boolean };
  /** How many of this job one worker process runs at once. */
  concurrency?: number;
  expireInSeconds?: number;
};

/** Keeps the job's literal name, so a registry derived from a list of jobs knows each name's payload. */
export function defineJob<const N extends string, S extends z.ZodType, C = unknown>(
  def: JobDef<S, N, C>,
): JobDef<S, N, C> {
  return def;
}

export type EnqueueOptions = { startAfter?: Date; singletonKey?: string; id?: string };

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
  #context: { value: C } | undefined;
  #started = false;

  // Both drivers go through the app's own connection (PGlite's single one, or the pg pool), so the queue
  // needs no second connection string and closing the queue never closes the app's database.
  constructor(db: Db, opts: JobQueueOptions = {}) {
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
    for (const def of this.#defs.values()) {
      const handler = async (jobs: PgBoss.JobWithMetadata<unknown>[]) => {
        for (const job of jobs) {
          const data = def.schema.parse(job.data);
          await def.handle(data, { id: job.id, retryCount: job.retryCount, deps: context.value });
        }
      };
      for (let i = 0; i < (def.concurrency ?? 1); i++) {
        await this.boss.work(
          def.name,
          { includeMetadata: true, batchSize: 1, pollingIntervalSeconds: this.pollingIntervalSeconds },
          handler,
        );
      }
    }
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

  #def(name: string): JobDef {
    const def = this.#defs.get(name);
    if (!def) throw new Error(`Unknown job '${name}'.`);
    return def;
  }

  /** Waits for running handlers (up to timeoutMs), then stops polling. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (!this.#started) return;
    await this.boss.stop({ graceful: true, wait: true, close: true, timeout: timeoutMs });
    this.#started = false;
  }
}
