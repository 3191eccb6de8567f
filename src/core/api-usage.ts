import type { Db } from './db/client.ts';

// v1 API requests and errors per organization and UTC day (issue 39, the dashboard's usage charts). Counted
// in memory on the hot path (a Map increment, no I/O) and added to usage_api_daily every FLUSH_MS and when
// the app closes; a crash loses at most the last few seconds of counts, which a usage chart can afford.

const FLUSH_MS = 5000;

type Counts = { requests: number; errors: number };

export class ApiUsageCounter {
  readonly #db: Db;
  #pending = new Map<string, Counts>();
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Db) {
    this.#db = db;
  }

  hit(orgId: string, error: boolean, now: Date): void {
    const key = `${orgId}|${now.toISOString().slice(0, 10)}`;
    let c = this.#pending.get(key);
    if (!c) {
      c = { requests: 0, errors: 0 };
      this.#pending.set(key, c);
    }
    c.requests++;
    if (error) c.errors++;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.flush().catch(() => {});
    }, FLUSH_MS).unref();
  }

  /** Adds what was counted since the last flush. */
  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    if (!batch.size) return;
    this.#pending = new Map();
    for (const [key, c] of batch) {
      const [orgId, day] = key.split('|');
      await this.#db.query(
        `insert into usage_api_daily (org_id, day, requests, errors) values ($1, $2, $3, $4)
         on conflict (org_id, day) do update
           set requests = usage_api_daily.requests + excluded.requests,
               errors = usage_api_daily.errors + excluded.errors`,
        [orgId, day, c.requests, c.errors],
      );
    }
  }
}

const counters = new WeakMap<Db, ApiUsageCounter>();

/** The counter of one database handle (one Pier; two in one process never share one). */
export function apiUsage(db: Db): ApiUsageCounter {
  let c = counters.get(db);
  if (!c) {
    c = new ApiUsageCounter(db);
    counters.set(db, c);
  }
  return c;
}
