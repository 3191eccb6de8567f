import { z } from 'zod';
import type { Queryable } from '../../core/db/client.ts';
import { type BatchJob, defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { attempt, type Claimed, claimBatch } from './delivery.ts';
import { type Outcome, OutcomeWriter } from './outcome-writer.ts';
import type { EmailStatus } from './tables.ts';
import { SmtpPool } from './transport.ts';

// Delivery: one pg-boss job per e-mail (`mail.deliver`), inserted in the transaction that accepts the
// e-mail, with startAfter = scheduledAt, so scheduled mail lives in the database and survives restarts.
// Workers take the jobs in batches (handleMany): one statement claims the batch's e-mails, the mails go
// out concurrently through the pooled transport, and the outcomes are group-committed (outcome-writer.ts).
// Sandbox mail and all mail without SMTP_URL goes to the outbox.

export const MAIL_DELIVER_JOB = 'mail.deliver';
/** Outcomes a worker process may have in hand, not yet written, before its workers wait for the writer. */
const OUTCOME_BACKLOG = 1000;
/** Mails of a batch still out when its worker claims the next batch (a few pool round trips' worth). */
const TAIL = 40;

/** Per process (per Deps): the pooled SMTP transport and the outcome writer. */
const pools = new WeakMap<Deps, SmtpPool>();
const writers = new WeakMap<Deps, OutcomeWriter>();

function smtpPool(deps: Deps): SmtpPool | null {
  if (!deps.config.smtp) return null;
  let pool = pools.get(deps);
  if (!pool) {
    pool = new SmtpPool(deps.config.smtp, deps.config.dkim);
    pools.set(deps, pool);
  }
  return pool;
}

function outcomeWriter(deps: Deps): OutcomeWriter {
  let w = writers.get(deps);
  if (!w) {
    w = new OutcomeWriter(deps);
    writers.set(deps, w);
  }
  return w;
}

/**
 * On shutdown (after the workers drained): waits for the deliveries still running and writes their
 * outcomes (OutcomeWriter.close), then closes the SMTP connections.
 */
export async function closeMailTransport(deps: Deps): Promise<void> {
  await writers.get(deps)?.close();
  writers.delete(deps);
  pools.get(deps)?.close();
  pools.delete(deps);
}

/** Queues the delivery jobs of new e-mails inside the transaction that inserts them; returns job ids. */
export function queueDeliveries(
  deps: Deps,
  tx: Queryable,
  rows: { id: string; jobId: string; scheduledAt: Date | null }[],
): Promise<string[]> {
  return deps.jobs.insert(
    rows.map((r) => ({
      name: MAIL_DELIVER_JOB,
      id: r.jobId,
      data: { emailId: r.id },
      startAfter: r.scheduledAt,
    })),
    { tx },
  );
}

/** One claimed e-mail: its attempt, then its outcome to the group commit (resolves once written). */
async function deliverOne(deps: Deps, writer: OutcomeWriter, email: Claimed): Promise<EmailStatus> {
  const pool = email.environment === 'sandbox' ? null : smtpPool(deps);
  let outcome: Outcome;
  try {
    outcome = await attempt(deps, email, pool);
  } catch (err) {
    writer.abandon();
    throw err;
  }
  await writer.write(outcome);
  return outcome.status;
}

/**
 * Runs one delivery attempt for each e-mail of a batch and resolves once every outcome is recorded.
 * Returns each claimed e-mail's new status (e-mails cancelled or already handled are absent).
 */
export async function deliverBatch(
  deps: Deps,
  items: { emailId: string; jobId: string | null }[],
): Promise<Map<string, EmailStatus>> {
  const claimed = await claimBatch(deps, items);
  const writer = outcomeWriter(deps);
  writer.expect(claimed.length);
  const results = await Promise.allSettled(claimed.map((email) => deliverOne(deps, writer, email)));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return new Map(claimed.map((e, i) => [e.id, (results[i] as PromiseFulfilledResult<EmailStatus>).value]));
}

/**
 * The workers' path. The jobs are gone already (consume: 'delete') and the e-mail rows are the record, so
 * a worker does not wait for its batch to end: it returns once only TAIL mails of it are still out, and
 * claims its next batch while they finish. Otherwise both workers' batches, sharing one FIFO pool, end
 * together and the pool drains during every claim. Outcomes go to the group commit as always; a failed
 * write leaves its e-mails `sending` for the sweeper. Shutdown waits for the tails (OutcomeWriter.close).
 */
async function deliverOverlapped(deps: Deps, items: { emailId: string; jobId: string }[]): Promise<void> {
  const claimed = await claimBatch(deps, items);
  const writer = outcomeWriter(deps);
  writer.expect(claimed.length);
  let left = claimed.length;
  await new Promise<void>((resolve) => {
    if (left <= TAIL) resolve();
    for (const email of claimed)
      deliverOne(deps, writer, email)
        .catch((err) => deps.log.error({ err, emailId: email.id }, 'mail delivery attempt not recorded'))
        .finally(() => {
          if (--left <= TAIL) resolve();
        });
  });
  // Back-pressure: a worker never runs ahead of the writer by more than OUTCOME_BACKLOG outcomes.
  await writer.drainBelow(OUTCOME_BACKLOG);
}

/** One delivery attempt of one e-mail; null when it was cancelled or already handled. */
export async function deliverEmail(deps: Deps, emailId: string): Promise<EmailStatus | null> {
  return (await deliverBatch(deps, [{ emailId, jobId: null }])).get(emailId) ?? null;
}

export const mailDeliverJob = defineJob({
  name: MAIL_DELIVER_JOB,
  schema: z.object({ emailId: z.uuid() }),
  handleMany: async (jobs: BatchJob<{ emailId: string }>[], { deps }: { deps: Deps }) => {
    await deliverOverlapped(
      deps,
      jobs.map((j) => ({ emailId: j.data.emailId, jobId: j.id })),
    );
  },
  // Two workers, each with a batch in hand: while one waits for its last sends and its outcomes, the
  // other keeps the SMTP pool busy.
  concurrency: 2,
  // Per-statement costs are spread over the batch: on PGlite 50 per claim cost a quarter more CPU per mail
  // than 100, and 250 a little less.
  batchSize: 200,
  // A claimed job is deleted, not updated twice: the e-mail's own status is the record, and the sweeper
  // re-queues an e-mail whose worker died mid-batch (docs/decisions/023).
  consume: 'delete',
  retry: { limit: 0, delaySec: 1 },
});
