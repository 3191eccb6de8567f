import type { Queryable } from '../../core/db/client.ts';
import { positionalInserts } from '../../core/db/positional.ts';
import type { Deps } from '../../deps.ts';
import { byPrimaryKey } from './by-primary-key.ts';
import type { EmailStatus } from './tables.ts';
import type { Rejection } from './transport.ts';

// Group commit of delivery outcomes: instead of one UPDATE + INSERT per e-mail, outcomes wait (at most
// maxDelayMs, or until maxBatch are pending, or until no delivery is still in flight) and are written
// together: one multi-row UPDATE of mail_emails and one multi-row INSERT of their events, in one
// statement. A writer's promise resolves once its outcome is durable, so a job completes only after its
// outcome is recorded; a failed flush rejects them all (the e-mails stay `sending` and the sweeper
// re-queues them).

export type MailEvent = { type: string; detail?: Record<string, unknown> };

export type Outcome = {
  id: string;
  status: EmailStatus;
  failureReason?: string;
  messageId?: string;
  sentAt?: Date;
  deliveredAt?: Date;
  events: MailEvent[];
  /** Hard-bounced recipients to add to the organization's suppression list. */
  suppress?: { orgId: string; environment: string; rejected: Rejection[] };
  /** Back to `queued`: a new delivery job starts then. */
  retryAt?: Date;
};

type Pending = { o: Outcome; resolve: () => void; reject: (err: unknown) => void };

// Only e-mails still `sending` move on: a second outcome for the same attempt is dropped with its events.
// `m.id = ANY($4)` and byPrimaryKey keep the plan on the primary key (PGlite never analyzes tables).
const FLUSH_SQL = `
WITH v AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, status text, failure_reason text,
    message_id text, sent_at timestamptz, delivered_at timestamptz, job_id uuid)
), u AS (
  UPDATE mail_emails m SET status = v.status, failure_reason = COALESCE(v.failure_reason, m.failure_reason),
    message_id = COALESCE(v.message_id, m.message_id), sent_at = COALESCE(v.sent_at, m.sent_at),
    delivered_at = COALESCE(v.delivered_at, m.delivered_at), job_id = COALESCE(v.job_id, m.job_id),
    updated_at = $2
  FROM v WHERE m.id = ANY($4::uuid[]) AND m.id = v.id AND m.status = 'sending'
  RETURNING m.id
)
INSERT INTO mail_events (email_id, type, at, detail)
SELECT (ev.item->>'e')::uuid, ev.item->>'t', $2, ev.item->'d'
FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS ev(item, n)
JOIN u ON u.id = (ev.item->>'e')::uuid
ORDER BY ev.n`;

export class OutcomeWriter {
  readonly #deps: Deps;
  readonly #maxDelayMs: number;
  readonly #maxBatch: number;
  #pending: Pending[] = [];
  /** Outcomes handed to a flush that has not finished yet. */
  #writing = 0;
  #inFlight = 0;
  /** close() waiting for the deliveries still in flight. */
  #whenIdle: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();

  constructor(deps: Deps, opts: { maxDelayMs?: number; maxBatch?: number } = {}) {
    this.#deps = deps;
    this.#maxDelayMs = opts.maxDelayMs ?? 200;
    this.#maxBatch = opts.maxBatch ?? 500;
  }

  /** n deliveries started whose outcomes will follow (when none is left in flight, flush at once). */
  expect(n: number): void {
    this.#inFlight += n;
  }

  /** A delivery that ended without an outcome (it threw). */
  abandon(): void {
    this.#inFlight--;
    if (this.#inFlight <= 0 && this.#pending.length) void this.flush().catch(() => {});
    this.#notifyIdle();
  }

  /** Queues an outcome; resolves once it is written. */
  write(o: Outcome): Promise<void> {
    this.#inFlight--;
    const done = new Promise<void>((resolve, reject) => this.#pending.push({ o, resolve, reject }));
    if (this.#pending.length >= this.#maxBatch || this.#inFlight <= 0) void this.flush().catch(() => {});
    else this.#timer ??= setTimeout(() => void this.flush().catch(() => {}), this.#maxDelayMs);
    this.#notifyIdle();
    return done;
  }

  #notifyIdle(): void {
    if (this.#inFlight > 0) return;
    for (const resolve of this.#whenIdle.splice(0)) resolve();
  }

  /** Writes everything pending (flushes run one after another, so outcomes land in order). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    this.#pending = [];
    if (!batch.length) return this.#chain;
    this.#writing += batch.length;
    this.#chain = this.#chain.then(async () => {
      try {
        await this.#write(batch.map((p) => p.o));
        for (const p of batch) p.resolve();
      } catch (err) {
        for (const p of batch) p.reject(err);
        throw err;
      } finally {
        this.#writing -= batch.length;
      }
    });
    return this.#chain.catch(() => {});
  }

  async #write(outcomes: Outcome[]): Promise<void> {
    const deps = this.#deps;
    const now = deps.clock.now().toISOString();
    const retries = outcomes.filter((o) => o.retryAt);
    const jobIds = new Map<string, string>();
    const rows = outcomes.map((o) => ({
      id: o.id,
      status: o.status,
      failure_reason: o.failureReason ?? null,
      message_id: o.messageId ?? null,
      sent_at: o.sentAt?.toISOString() ?? null,
      delivered_at: o.deliveredAt?.toISOString() ?? null,
      job_id: jobIds.get(o.id) ?? null,
    }));
    const events = outcomes.flatMap((o) => o.events.map((e) => ({ e: o.id, t: e.type, d: e.detail ?? {} })));
    const run = async (q: Queryable, inTx = true) => {
      if (inTx && deps.db.kind === 'pglite') await q.query('SET LOCAL enable_seqscan = off');
      await q.query(FLUSH_SQL, [JSON.stringify(rows), now, JSON.stringify(events), rows.map((r) => r.id)]);
    };
    const suppressions = outcomes.flatMap((o) =>
      (o.suppress?.rejected ?? []).map((r) => [
        o.suppress!.orgId,
        o.suppress!.environment,
        r.address,
        `hard bounce: ${r.response}`.slice(0, 500),
        o.id,
        now,
      ]),
    );
    if (!retries.length && !suppressions.length) return byPrimaryKey(deps, (q) => run(q, false));
    // Rare cases (re-queues, bounces) take a transaction: the new job exists exactly when the e-mail is
    // back to `queued` pointing at it.
    for (const o of retries) jobIds.set(o.id, crypto.randomUUID());
    for (const r of rows) r.job_id = jobIds.get(r.id) ?? null;
    await deps.db.transaction(async (tx) => {
      for (const st of positionalInserts(
        'mail_suppressions',
        ['org_id', 'environment', 'address', 'reason', 'email_id', 'created_at'],
        suppressions,
        { suffix: 'ON CONFLICT DO NOTHING' },
      ))
        await tx.query(st.text, st.params);
      if (retries.length) {
        await deps.jobs.insert(
          retries.map((o) => ({
            name: 'mail.deliver' as const,
            id: jobIds.get(o.id)!,
            data: { emailId: o.id },
            startAfter: o.retryAt!,
          })),
          { tx },
        );
      }
      await run(tx);
    });
  }

  /** Back-pressure: with more than `limit` outcomes not yet written, writes them now and waits. */
  async drainBelow(limit: number): Promise<void> {
    if (this.#pending.length + this.#writing > limit) await this.flush();
  }

  /**
   * Shutdown: waits for every delivery still in flight (a worker may have moved on before the last mails
   * of its batch were out), then writes what is pending and waits for writes in progress.
   */
  async close(): Promise<void> {
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#whenIdle.push(resolve));
    await this.flush();
  }
}
