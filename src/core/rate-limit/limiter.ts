import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { errors } from '../errors.ts';

export type WindowRule = { limit: number; windowSec: number };

/**
 * Fixed-window counters in the database, so every API node shares them. `hit` counts an event;
 * `assertUnder` refuses with 429 RATE_LIMITED once a key reached its limit in the current window.
 */
export class WindowLimiter {
  readonly #db: Db;
  readonly #clock: Clock;
  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  #window(rule: WindowRule): { start: Date; retryAfter: number } {
    const nowMs = this.#clock.now().getTime();
    const size = rule.windowSec * 1000;
    const start = Math.floor(nowMs / size) * size;
    return { start: new Date(start), retryAfter: Math.max(1, Math.ceil((start + size - nowMs) / 1000)) };
  }

  async hit(key: string, rule: WindowRule): Promise<number> {
    const { start } = this.#window(rule);
    const { rows } = await this.#db.query<{ count: number }>(
      `INSERT INTO rate_limit_windows (key, window_start, count) VALUES ($1, $2, 1)
       ON CONFLICT (key) DO UPDATE SET
         count = CASE WHEN rate_limit_windows.window_start = EXCLUDED.window_start THEN rate_limit_windows.count + 1 ELSE 1 END,
         window_start = EXCLUDED.window_start
       RETURNING count`,
      [key, start.toISOString()],
    );
    return Number(rows[0]!.count);
  }

  async assertUnder(key: string, rule: WindowRule): Promise<void> {
    const { start, retryAfter } = this.#window(rule);
    const { rows } = await this.#db.query<{ count: number }>(
      'SELECT count FROM rate_limit_windows WHERE key = $1 AND window_start = $2',
      [key, start.toISOString()],
    );
    if (rows[0] && Number(rows[0].count) >= rule.limit) throw errors.rateLimited(retryAfter);
  }
}
