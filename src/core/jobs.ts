import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { Db } from './db/client.ts';

// Background work on pg-boss: jobs live in Postgres (PGlite or a server), survive restarts, and several
// worker processes share one queue through SKIP LOCKED.

export type JobContext = { id: string; retryCount: number };

export type JobDef<S extends z.ZodType = z.ZodType> = {
  name: string;
  schema: S;
  handle: (data: z.infer<S>, ctx: JobContext) => Promise<void>;
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

export function defineJob<S extends z.ZodType>(def: JobDef<S>): JobDef<S> {
  return def;
}

export type EnqueueOptions = { startAfter?: Date; singletonKey?: string; id?: string };

/** A jobs registry maps names to payload types, so enqueue('mail.deliver', payload) is type-checked. */
export type JobPayloads = Record<string, unknown>;

export class JobQueue<P extends JobPayloads = JobPayloads> {
  readonly boss: PgBoss;
  readonly #defs = new Map<string, JobDef>();
  #started = false;

  constructor(db: Db, databaseUrl: string | undefined, opts: { pollingIntervalSeconds?: number } = {}) {
    const common = { schema: 'pgboss', supervise: true, schedule: true, migrate: true };
    this.boss =
      db.kind === 'pglite'
        ? new PgBoss({
            ...common,
            db: {
              // pg-boss sends multi-statement transactions without parameters; PGlite runs those with exec.
              executeSql: async (text: string, values?: unknown[]) => {
                if (values?.length) return db.pglite!.query(text, values);
                const results = await db.pglite!.exec(text);
                return results[results.length - 1] ?? { rows: [] };
              },
            },
          })
        : new PgBoss({ ...common, connectionString: databaseUrl, max: 4 });
    this.boss.on('error', () => {});
    this.pollingIntervalSeconds = opts.pollingIntervalSeconds ?? 0.5;
  }
  readonly pollingIntervalSeconds: number;

  register(defs: JobDef[]): void {
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
    for (const def of this.#defs.values()) {
      const handler = async (jobs: PgBoss.JobWithMetadata<unknown>[]) => {
        await Promise.all(
          jobs.map((job) =>
            def.handle(def.schema.parse(job.data), { id: job.id, retryCount: job.retryCount }),
          ),
        );
      };
      for (let i = 0; i < (def.concurrency ?? 1); i++) {
        await this.boss.work(
          def.name,
          {
            includeMetadata: true,
            batchSize: def.batchSize ?? 1,
            pollingIntervalSeconds: this.pollingIntervalSeconds,
          },
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
    const def = this.#defs.get(name);
    if (!def) throw new Error(`Unknown job '${name}'.`);
    return this.boss.send(name, data as object, {
      id: opts.id,
      startAfter: opts.startAfter,
      singletonKey: opts.singletonKey,
      retryLimit: def.retry?.limit ?? 0,
      retryDelay: def.retry?.delaySec ?? 1,
      retryBackoff: def.retry?.backoff ?? false,
      expireInSeconds: def.expireInSeconds ?? 15 * 60,
    });
  }

  async schedule<K extends keyof P & string>(name: K, cron: string, data: P[K]): Promise<void> {
    await this.boss.schedule(name, cron, data as object, { tz: 'UTC' });
  }

  /** Waits for running handlers (up to timeoutMs), then stops polling. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (!this.#started) return;
    await this.boss.stop({ graceful: true, wait: true, close: true, timeout: timeoutMs });
    this.#started = false;
  }
}
