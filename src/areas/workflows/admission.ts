import jsonata from 'jsonata';
import type { Queryable } from '../../core/db/client.ts';
import type { Limits } from './triggers/config.ts';

// Whether a new run may start now or is held (pending, no step promoted) behind others: a concurrency key
// (at most `limit` runs at once per value of an expression over the run's variables), a schedule's `queue`
// overlap (one run of that schedule at a time), and a rate limit on starts. Decisions about one workflow
// are taken under a transaction-scoped advisory lock on it, so two starts racing cannot both take the last
// place; held runs are released oldest first when a run of the workflow ends (scheduler.ts, releaseHeld).

const ACTIVE = `status in ('pending', 'running') and not held`;

export async function lockWorkflowIn(tx: Queryable, workflowId: string): Promise<void> {
  await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`pier.workflow:${workflowId}`]);
}

/** The run's concurrency key: null without a concurrency limit, '' for one limit over the whole workflow. */
export async function concurrencyKeyOf(
  limits: Limits,
  variables: Record<string, unknown>,
): Promise<string | null> {
  const c = limits.concurrency;
  if (!c) return null;
  if (!c.key) return '';
  const v = await jsonata(c.key).evaluate({ variables });
  if (v === undefined || v === null) return '';
  return (typeof v === 'string' ? v : JSON.stringify(v)).slice(0, 500);
}

type Keys = { concurrencyKey: string | null; serialKey: string | null };

/** Whether a run with these keys must wait; `queueing` also makes it wait behind runs already held (FIFO). */
export async function mustHoldIn(
  tx: Queryable,
  workflowId: string,
  limits: Limits,
  keys: Keys,
  queueing: { before?: Date } = {},
): Promise<boolean> {
  const held = queueing.before ? 'held and created_at < $3' : 'held';
  if (keys.concurrencyKey !== null) {
    const limit = limits.concurrency?.limit ?? 1;
    const { rows } = await tx.query<{ active: number; waiting: number }>(
      `select count(*) filter (where ${ACTIVE})::int as active, count(*) filter (where ${held})::int as waiting
         from workflow_runs where workflow_id = $1 and concurrency_key = $2 and status in ('pending', 'running')`,
      queueing.before
        ? [workflowId, keys.concurrencyKey, queueing.before.toISOString()]
        : [workflowId, keys.concurrencyKey],
    );
    if (rows[0]!.active >= limit || rows[0]!.waiting > 0) return true;
  }
  if (keys.serialKey !== null) {
    const { rows } = await tx.query<{ active: number; waiting: number }>(
      `select count(*) filter (where ${ACTIVE})::int as active, count(*) filter (where ${held})::int as waiting
         from workflow_runs where workflow_id = $1 and serial_key = $2 and status in ('pending', 'running')`,
      queueing.before
        ? [workflowId, keys.serialKey, queueing.before.toISOString()]
        : [workflowId, keys.serialKey],
    );
    if (rows[0]!.active > 0 || rows[0]!.waiting > 0) return true;
  }
  return false;
}

/** Seconds until a start is allowed again, or 0 when the rate limit (if any) has room. */
export async function rateLimitWaitIn(
  tx: Queryable,
  workflowId: string,
  limits: Limits,
  now: Date,
): Promise<number> {
  const r = limits.rateLimit;
  if (!r) return 0;
  const since = new Date(now.getTime() - r.periodSeconds * 1000);
  const { rows } = await tx.query<{ n: number; oldest: Date | string | null }>(
    `select count(*)::int as n, min(created_at) as oldest from (
       select created_at from workflow_runs where workflow_id = $1 and created_at > $2
        order by created_at desc limit $3) recent`,
    [workflowId, since.toISOString(), r.limit],
  );
  if (rows[0]!.n < r.limit || !rows[0]!.oldest) return 0;
  const free = new Date(rows[0]!.oldest).getTime() + r.periodSeconds * 1000;
  return Math.max(1, Math.ceil((free - now.getTime()) / 1000));
}

/** Releases the held runs of a workflow that may now start, oldest first; returns their ids. Inside `tx`. */
export async function unholdIn(tx: Queryable, workflowId: string): Promise<string[]> {
  await lockWorkflowIn(tx, workflowId);
  const { rows: wf } = await tx.query<{ limits: Limits }>('select limits from workflows where id = $1', [
    workflowId,
  ]);
  const limits = wf[0]?.limits ?? {};
  const { rows: held } = await tx.query<{
    id: string;
    concurrency_key: string | null;
    serial_key: string | null;
    created_at: Date;
  }>(
    `select id, concurrency_key, serial_key, created_at from workflow_runs
      where workflow_id = $1 and held and status = 'pending' order by created_at, id`,
    [workflowId],
  );
  const released: string[] = [];
  for (const r of held) {
    const keys = {
      // A workflow whose limit was removed (or that was deleted) lets its held runs go.
      concurrencyKey: limits.concurrency ? r.concurrency_key : null,
      serialKey: r.serial_key,
    };
    if (await mustHoldIn(tx, workflowId, limits, keys, { before: new Date(r.created_at) })) continue;
    await tx.query('update workflow_runs set held = false where id = $1', [r.id]);
    released.push(r.id);
  }
  return released;
}
