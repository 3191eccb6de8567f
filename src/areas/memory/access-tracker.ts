import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../core/db/client.ts';

/** How long recorded accesses wait before they are written: recalls within it share one UPDATE. */
export const ACCESS_FLUSH_MS = 200;

/**
 * Counts recalls without slowing them: recall() hands the ids here and replies at once; the counts are
 * written after the reply, coalesced into one UPDATE per ACCESS_FLUSH_MS (decision 070: on PGlite's one
 * connection each UPDATE waits for, and delays, the recalls in flight, so fewer and larger is better; a
 * memory recalled again within the window is written once). A crash can lose the last window's counts —
 * they only steer tiering, so that trade is documented in docs/memory.md.
 */
export class AccessTracker {
  readonly #db: Db;
  readonly #log: FastifyBaseLogger;
  readonly #delayMs: number;
  #pending = new Map<string, { n: number; at: Date }>();
  #flushing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | null = null;

  constructor(db: Db, log: FastifyBaseLogger, delayMs = ACCESS_FLUSH_MS) {
    this.#db = db;
    this.#log = log;
    this.#delayMs = delayMs;
  }

  record(ids: string[], at: Date): void {
    if (ids.length === 0) return;
    for (const id of ids) {
      const p = this.#pending.get(id);
      this.#pending.set(id, { n: (p?.n ?? 0) + 1, at: p && p.at > at ? p.at : at });
    }
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.#schedule(), this.#delayMs);
    this.#timer.unref(); // a pending write never keeps the process alive
  }

  #schedule(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#flushing = this.#flushing.then(() => this.#flush());
  }

  /** Writes what is recorded now and resolves once every recorded access is written (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#timer || this.#pending.size > 0) {
      this.#schedule();
      await this.#flushing;
    }
    await this.#flushing;
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = new Map();
    if (batch.size === 0) return;
    const ids = [...batch.keys()];
    const counts = ids.map((id) => batch.get(id)!.n);
    const ats = ids.map((id) => batch.get(id)!.at.toISOString());
    try {
      // Counts go to the narrow memory_access rows, never the wide memory rows (decision 092); a memory
      // deleted since it was recalled is skipped.
      await this.#db.query(
        `INSERT INTO memory_access AS a (memory_id, access_count, recent_access_count, last_accessed_at)
         SELECT u.id, u.n, u.n, u.at FROM unnest($1::uuid[], $2::int[], $3::timestamptz[]) AS u(id, n, at)
          WHERE EXISTS (SELECT 1 FROM memories m WHERE m.id = u.id)
         ON CONFLICT (memory_id) DO UPDATE
            SET access_count = a.access_count + excluded.access_count,
                recent_access_count = a.recent_access_count + excluded.recent_access_count,
                last_accessed_at = greatest(a.last_accessed_at, excluded.last_accessed_at)`,
        [ids, counts, ats],
      );
    } catch (err) {
      this.#log.error({ err, memories: ids.length }, 'memory access tracking failed');
    }
  }
}
