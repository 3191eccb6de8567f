import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';

// A token bucket per key (a v1 API key, a function-API credential or client address), decided in memory and shared with the other API nodes through the database
// (v1_rate_buckets) by a batched sync every SYNC_MS: the request path costs no query once a key is known
// here. The first request of a key in this process takes from the database bucket directly (an exact
// decision, one atomic upsert); after that each sync sends what this process spent since the last one and
// adopts the shared balance, which already holds the other nodes' spending. Spending that several nodes
// allowed within one interval becomes a debt on the shared bucket (down to -burst) that every node then
// pays back by refusing. The bound: docs/decisions/075-v1-rate-limit-in-memory.md.

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

/** How often the spending of this process is sent to the shared buckets. */
export const SYNC_MS = 250;
/** A key untouched this long is forgotten here (after its last sync); its next request asks the database. */
const IDLE_MS = 60_000;

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

// One statement for every key touched since the last sync: refill the shared bucket to now, subtract what
// this process spent (never below -burst), and read the balance back. A key another node deleted meanwhile
// is inserted again; a concurrent first insert of the same key is left to the next sync.
const SYNC_SQL = `
WITH u AS (
  SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[], $4::float8[]) AS u(key, burst, per_sec, spent)
), upd AS (
  UPDATE v1_rate_buckets b SET
    tokens = GREATEST(-u.burst,
      LEAST(u.burst, b.tokens + GREATEST(0, $5::bigint - b.updated_ms) * u.per_sec / 1000) - u.spent),
    updated_ms = GREATEST(b.updated_ms, $5::bigint)
  FROM u WHERE b.key = u.key
  RETURNING b.key, b.tokens, b.updated_ms
), ins AS (
  INSERT INTO v1_rate_buckets (key, tokens, updated_ms, allowed)
  SELECT u.key, GREATEST(-u.burst, u.burst - u.spent), $5::bigint, true FROM u
  WHERE NOT EXISTS (SELECT 1 FROM upd WHERE upd.key = u.key)
  ON CONFLICT (key) DO NOTHING
  RETURNING key, tokens, updated_ms
)
SELECT key, tokens, updated_ms FROM upd UNION ALL SELECT key, tokens, updated_ms FROM ins`;

type Entry = {
  rule: BucketRule;
  /** The balance as this process knows it at updatedMs (spending since the last sync included). */
  tokens: number;
  updatedMs: number;
  /** Spent here and not yet sent to the database. */
  pending: number;
  touchedMs: number;
  /** Touched since the last sync: its balance is worth refreshing. */
  dirty: boolean;
};

export class TokenBuckets {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();
  /** First requests of a key waiting for the database's answer: the others of the same key wait with them. */
  readonly #loading = new Map<string, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #syncing: Promise<void> | undefined;
  readonly #onError: (err: unknown) => void;
  readonly #syncMs: number;

  /** `syncMs` 0: no interval, only sync() and close() send (tests that place each sync themselves). */
  constructor(db: Db, clock: Clock, opts: { onSyncError?: (err: unknown) => void; syncMs?: number } = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#onError = opts.onSyncError ?? (() => {});
    this.#syncMs = opts.syncMs ?? SYNC_MS;
  }

  /**
   * The synchronous hot path: a key this process already knows is decided here without a promise.
   * undefined means "not known here yet" (call take).
   */
  takeKnown(key: string, rule: BucketRule): BucketResult | undefined {
    const entry = this.#entries.get(key);
    return entry ? this.#takeLocal(entry, rule) : undefined;
  }

  async take(key: string, rule: BucketRule): Promise<BucketResult> {
    let entry = this.#entries.get(key);
    if (!entry) {
      const loading = this.#loading.get(key);
      if (loading) {
        await loading;
        entry = this.#entries.get(key);
      }
    }
    if (!entry) return this.#first(key, rule);
    return this.#takeLocal(entry, rule);
  }

  /** Sends what is pending now (also called by the interval and at close). */
  sync(): Promise<void> {
    this.#syncing ??= this.#sync().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  /** Stops the interval after a last sync. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.sync().catch(this.#onError);
  }

  async #first(key: string, rule: BucketRule): Promise<BucketResult> {
    const now = this.#clock.now().getTime();
    let result!: BucketResult;
    const p = (async () => {
      const { rows } = await this.#db.query<{ tokens: number; allowed: boolean }>(TAKE_SQL, [
        key,
        rule.burst,
        rule.perSec,
        now,
      ]);
      const tokens = Number(rows[0]!.tokens);
      const allowed = Boolean(rows[0]!.allowed);
      this.#entries.set(key, { rule, tokens, updatedMs: now, pending: 0, touchedMs: now, dirty: false });
      this.#startTimer();
      result = outcome(allowed, tokens, rule);
    })();
    this.#loading.set(key, p);
    try {
      await p;
    } finally {
      this.#loading.delete(key);
    }
    return result;
  }

  #takeLocal(e: Entry, rule: BucketRule): BucketResult {
    const now = this.#clock.now().getTime();
    e.rule = rule;
    const tokens = Math.min(rule.burst, e.tokens + (Math.max(0, now - e.updatedMs) * rule.perSec) / 1000);
    e.updatedMs = Math.max(e.updatedMs, now);
    e.touchedMs = now;
    e.dirty = true;
    if (tokens >= 1) {
      e.tokens = tokens - 1;
      e.pending += 1;
      return outcome(true, e.tokens, rule);
    }
    e.tokens = tokens;
    return outcome(false, tokens, rule);
  }

  #startTimer(): void {
    if (this.#timer || !this.#syncMs) return;
    this.#timer = setInterval(() => void this.sync().catch(this.#onError), this.#syncMs);
    this.#timer.unref();
  }

  async #sync(): Promise<void> {
    const now = this.#clock.now().getTime();
    const batch: [string, Entry, number][] = [];
    for (const [key, e] of this.#entries) {
      if (e.dirty || e.pending > 0) batch.push([key, e, e.pending]);
      else if (now - e.touchedMs > IDLE_MS) this.#entries.delete(key);
    }
    if (!batch.length) return;
    for (const [, e, sent] of batch) {
      e.pending -= sent;
      e.dirty = false;
    }
    let rows: { key: string; tokens: number; updated_ms: number | string }[];
    try {
      ({ rows } = await this.#db.query<{ key: string; tokens: number; updated_ms: number | string }>(
        SYNC_SQL,
        [
          batch.map(([k]) => k),
          batch.map(([, e]) => e.rule.burst),
          batch.map(([, e]) => e.rule.perSec),
          batch.map(([, , sent]) => sent),
          now,
        ],
      ));
    } catch (err) {
      // Sent again next time.
      for (const [, e, sent] of batch) {
        e.pending += sent;
        e.dirty = true;
      }
      throw err;
    }
    const shared = new Map(rows.map((r) => [r.key, r]));
    for (const [key, e] of batch) {
      const r = shared.get(key);
      if (!r || this.#entries.get(key) !== e) continue;
      // The shared balance, less what this process spent while the sync was on its way.
      const at = Math.max(Number(r.updated_ms), now);
      if (at < e.updatedMs) {
        // Taken after the sync started: bring the shared balance forward to that instant first.
        const refilled = Math.min(
          e.rule.burst,
          Number(r.tokens) + ((e.updatedMs - at) * e.rule.perSec) / 1000,
        );
        e.tokens = refilled - e.pending;
      } else {
        e.tokens = Number(r.tokens) - e.pending;
        e.updatedMs = at;
      }
    }
  }
}

function outcome(allowed: boolean, tokens: number, rule: BucketRule): BucketResult {
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    retryAfterSec: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / rule.perSec)),
    resetSec: Math.max(0, Math.ceil((rule.burst - tokens) / rule.perSec)),
  };
}

/** The IETF draft-ietf-httpapi-ratelimit-headers policy: quota q over window w seconds (one per rule). */
export function rateLimitPolicy(policy: string, rule: BucketRule): string {
  return `"${policy}";q=${rule.burst};w=${Math.max(1, Math.ceil(rule.burst / rule.perSec))}`;
}

/** The RateLimit field of one decision: r tokens left; t seconds until full, or until the next token when refused. */
export function rateLimitState(policy: string, r: BucketResult): string {
  return `"${policy}";r=${r.remaining};t=${r.allowed ? r.resetSec : r.retryAfterSec}`;
}
