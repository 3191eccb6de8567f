import { z } from 'zod';
import type { Queryable } from '../../core/db/client.ts';
import { type BatchJob, defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { attempt, claimBatch } from './delivery.ts';
import { OutcomeWriter } from './outcome-writer.ts';
import type { EmailStatus } from './tables.ts';
import { SmtpPool } from './transport.ts';

// Delivery: one pg-boss job per e-mail (`mail.deliver`), inserted in the transaction that accepts the
// e-mail, with startAfter = scheduledAt, so scheduled mail lives in the database and survives restarts.
// Workers take the jobs in batches (handleMany): one statement claims the batch's e-mails, the mails go
// out concurrently through the pooled transport, and the outcomes are group-committed (outcome-writer.ts).
// Sandbox mail and all mail without SMTP_URL goes to the outbox.

export const MAIL_DELIVER_JOB = 'mail.deliver';

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

/** On shutdown (after the workers drained): writes pending outcomes, closes the SMTP connections. */
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
  const statuses = new Map<string, EmailStatus>();
  const results = await Promise.allSettled(
    claimed.map(async (email) => {
      const pool = email.environment === 'sandbox' ? null : smtpPool(deps);
      let outcome: Awaited<ReturnType<typeof attempt>>;
      try {
        outcome = await attempt(deps, email, pool);
      } catch (err) {
        writer.abandon();
        throw err;
      }
      await writer.write(outcome);
      statuses.set(email.id, outcome.status);
    }),
  );
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return statuses;
}

/** One delivery attempt of one e-mail; null when it was cancelled or already handled. */
export async function deliverEmail(deps: Deps, emailId: string): Promise<EmailStatus | null> {
  return (await deliverBatch(deps, [{ emailId, jobId: null }])).get(emailId) ?? null;
}

export const mailDeliverJob = defineJob({
  name: MAIL_DELIVER_JOB,
  schema: z.object({ emailId: z.uuid() }),
  handleMany: async (jobs: BatchJob<{ emailId: string }>[], { deps }: { deps: Deps }) => {
    await deliverBatch(
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
