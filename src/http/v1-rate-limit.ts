import type { Clock } from '../core/clock.ts';
import type { Db } from '../core/db/client.ts';

// A token bucket per API key kept in the database (v1_rate_buckets), so every API node shares one budget
// per key: `burst` tokens at most, refilled at `perSec`. One atomic upsert per request decides and
// records; no read-modify-write race between nodes.

export type BucketRule = { perSec: number; burst: number };
export type BucketResult = {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the next token (when refused) — the Retry-After value. */
  retryAfterSec: number;
  /** Seconds until the bucket is full again. */
  resetSec: number;
};

const TAKE_SQL = `
INSERT INTO v1_rate_buckets AS b (key, tokens, updated_ms, allowed)
VALUES ($1, $2::float8 - 1, $4::bigint, true)
ON CONFLICT (key) DO UPDATE SET
  tokens = CASE
    WHEN LEAST($2::float8, b.tokens + GREATEST(0, $4::bigint - b.updated_ms) * $3::float8 / 1000) >= 1
    THEN LEAST($2::float8, b.tokens + GREATEST(0, $4::bigint - b.updated_ms) * $3::float8 / 1000) - 1
    ELSE LEAST($2::float8, b.tokens + GREATEST(0, $4::bigint - b.updated_ms) * $3::float8 / 1000)
  END,
  allowed = LEAST($2::float8, b.tokens + GREATEST(0, $4::bigint - b.updated_ms) * $3::float8 / 1000) >= 1,
  updated_ms = GREATEST(b.updated_ms, $4::bigint)
RETURNING tokens, allowed`;

export class TokenBuckets {
  readonly #db: Db;
  readonly #clock: Clock;
  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async take(key: string, rule: BucketRule): Promise<BucketResult> {
    const now = this.#clock.now().getTime();
    const { rows } = await this.#db.query<{ tokens: number; allowed: boolean }>(TAKE_SQL, [
      key,
      rule.burst,
      rule.perSec,
      now,
    ]);
    const tokens = Number(rows[0]!.tokens);
    const allowed = Boolean(rows[0]!.allowed);
    return {
      allowed,
      remaining: Math.max(0, Math.floor(tokens)),
      retryAfterSec: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / rule.perSec)),
      resetSec: Math.max(0, Math.ceil((rule.burst - tokens) / rule.perSec)),
    };
  }
}
