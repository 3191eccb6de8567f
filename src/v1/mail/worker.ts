import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { addressOf, domainOf } from './addresses.ts';
import { storeInOutbox } from './outbox.ts';
import { type EmailStatus, mailSuppressions } from './tables.ts';
import { type OutgoingMail, type Rejection, SmtpPool } from './transport.ts';

// Delivery: one pg-boss job per e-mail (`mail.deliver`), queued with startAfter = scheduledAt, so
// scheduled mail lives in the database and survives restarts. The worker claims an e-mail with one
// conditional UPDATE (scheduled|queued → sending), the same guard cancel uses, so exactly one of them wins.
// Sandbox mail and all mail without SMTP_URL goes to the outbox.

export const MAIL_DELIVER_JOB = 'mail.deliver';

type Event = { type: string; detail?: Record<string, unknown> };

const pools = new WeakMap<Deps, SmtpPool>();

function smtpPool(deps: Deps): SmtpPool | null {
  if (!deps.config.smtp) return null;
  let pool = pools.get(deps);
  if (!pool) {
    pool = new SmtpPool(deps.config.smtp, deps.config.dkim);
    pools.set(deps, pool);
  }
  return pool;
}

/** Closes the process's pooled SMTP connections (on shutdown). */
export function closeMailTransport(deps: Deps): void {
  pools.get(deps)?.close();
  pools.delete(deps);
}

export async function enqueueDeliveries(
  deps: Deps,
  rows: { id: string; scheduledAt: Date | null }[],
): Promise<void> {
  if (rows.length === 1) {
    const r = rows[0]!;
    await deps.jobs.enqueue(MAIL_DELIVER_JOB, { emailId: r.id }, { startAfter: r.scheduledAt ?? undefined });
    return;
  }
  // Batches and broadcasts: one INSERT for all their jobs.
  await deps.jobs.boss.insert(
    rows.map((r) => ({
      name: MAIL_DELIVER_JOB,
      data: { emailId: r.id },
      startAfter: r.scheduledAt ?? undefined,
      expireInSeconds: 15 * 60,
    })),
  );
}

type Finish = {
  status: EmailStatus;
  failureReason?: string;
  messageId?: string;
  sentAt?: Date;
  deliveredAt?: Date;
};

// Claim and finish are single statements (data-modifying CTEs): atomic without a transaction, and two
// round trips per delivery instead of eight, which is most of the worker's cost.
const FINISH_SQL = `
WITH u AS (
  UPDATE mail_emails SET status = $2, failure_reason = COALESCE($3, failure_reason),
    message_id = COALESCE($4, message_id), sent_at = COALESCE($5::timestamptz, sent_at),
    delivered_at = COALESCE($6::timestamptz, delivered_at), updated_at = $7
  WHERE id = $1 AND status = 'sending' RETURNING id
)
INSERT INTO mail_events (email_id, type, at, detail)
SELECT u.id, ev.item->>'type', $7, ev.item->'detail'
FROM u, jsonb_array_elements($8::jsonb) WITH ORDINALITY AS ev(item, n)
ORDER BY ev.n`;

/** Moves the e-mail on from `sending` and records what happened, in one statement. */
async function finish(deps: Deps, id: string, f: Finish, events: Event[]) {
  await deps.db.query(FINISH_SQL, [
    id,
    f.status,
    f.failureReason ?? null,
    f.messageId ?? null,
    f.sentAt?.toISOString() ?? null,
    f.deliveredAt?.toISOString() ?? null,
    deps.clock.now().toISOString(),
    JSON.stringify(events.map((e) => ({ type: e.type, detail: e.detail ?? {} }))),
  ]);
}

async function suppress(deps: Deps, email: Claimed, rejected: Rejection[]): Promise<void> {
  if (!rejected.length) return;
  await deps.db.orm
    .insert(mailSuppressions)
    .values(
      rejected.map((r) => ({
        orgId: email.orgId,
        environment: email.environment,
        address: r.address,
        reason: `hard bounce: ${r.response}`.slice(0, 500),
        emailId: email.id,
        createdAt: deps.clock.now(),
      })),
    )
    .onConflictDoNothing();
}

const CLAIM_SQL = `
WITH c AS (
  UPDATE mail_emails SET status = 'sending', attempts = attempts + 1, updated_at = $2
  WHERE id = $1 AND status IN ('scheduled', 'queued')
  RETURNING id, org_id, environment, "from", "to", to_addresses, subject, html, text, reply_to,
    message_id, attempts
), e AS (
  INSERT INTO mail_events (email_id, type, at, detail)
  SELECT id, 'sending', $2, jsonb_build_object('attempt', attempts) FROM c
)
SELECT c.*, ARRAY(
  SELECT s.address FROM mail_suppressions s
  WHERE s.org_id = c.org_id AND s.environment = c.environment AND s.address = ANY(c.to_addresses)
) AS suppressed
FROM c`;

type Claimed = {
  id: string;
  orgId: string;
  environment: string;
  from: string;
  to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  replyTo: string[] | null;
  messageId: string | null;
  attempts: number;
  suppressed: string[];
};

/** scheduled|queued → sending, with its event and the recipients on the suppression list. */
async function claim(deps: Deps, emailId: string): Promise<Claimed | null> {
  const { rows } = await deps.db.query<Record<string, unknown>>(CLAIM_SQL, [
    emailId,
    deps.clock.now().toISOString(),
  ]);
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id as string,
    orgId: r.org_id as string,
    environment: r.environment as string,
    from: r.from as string,
    to: r.to as string[],
    subject: r.subject as string,
    html: r.html as string | null,
    text: r.text as string | null,
    replyTo: r.reply_to as string[] | null,
    messageId: r.message_id as string | null,
    attempts: Number(r.attempts),
    suppressed: (r.suppressed as string[]) ?? [],
  };
}

/** Runs one delivery attempt of an e-mail; a no-op when it was cancelled or already handled. */
export async function deliverEmail(deps: Deps, emailId: string): Promise<EmailStatus | null> {
  const email = await claim(deps, emailId);
  if (!email) return null;

  const blockedSet = new Set(email.suppressed);
  const to = email.to.filter((t) => !blockedSet.has(addressOf(t)));
  const events: Event[] = blockedSet.size
    ? [{ type: 'suppressed', detail: { addresses: [...blockedSet] } }]
    : [];
  if (!to.length) {
    await finish(deps, email.id, { status: 'failed', failureReason: 'suppressed' }, [
      ...events,
      { type: 'failed', detail: { reason: 'suppressed' } },
    ]);
    return 'failed';
  }

  const mail: OutgoingMail = {
    id: email.id,
    from: email.from,
    to,
    subject: email.subject,
    html: email.html,
    text: email.text,
    replyTo: email.replyTo,
    messageId: email.messageId ?? `<${email.id}@${domainOf(email.from)}>`,
  };
  const pool = email.environment === 'sandbox' ? null : smtpPool(deps);
  if (!pool) {
    const box = await storeInOutbox(deps, email, mail);
    const now = deps.clock.now();
    await finish(
      deps,
      email.id,
      { status: 'delivered', messageId: mail.messageId, sentAt: now, deliveredAt: now },
      [
        ...events,
        { type: 'sent', detail: { transport: 'outbox' } },
        { type: 'delivered', detail: { transport: 'outbox', outboxId: box.id } },
      ],
    );
    return 'delivered';
  }

  const out = await pool.send(mail);
  switch (out.kind) {
    case 'sent': {
      const bounced = out.rejected.filter((r) => r.code !== null && r.code >= 500);
      await suppress(deps, email, bounced);
      for (const r of out.rejected)
        events.push({ type: bounced.includes(r) ? 'bounced' : 'deferred', detail: { ...r } });
      await finish(deps, email.id, { status: 'sent', messageId: mail.messageId, sentAt: deps.clock.now() }, [
        ...events,
        { type: 'sent', detail: { transport: 'smtp', response: out.response, accepted: out.accepted } },
      ]);
      return 'sent';
    }
    case 'bounced':
      await suppress(deps, email, out.rejected);
      await finish(deps, email.id, { status: 'bounced', failureReason: out.response }, [
        ...events,
        { type: 'bounced', detail: { response: out.response, rejected: out.rejected } },
      ]);
      return 'bounced';
    case 'failed':
      await finish(deps, email.id, { status: 'failed', failureReason: out.response }, [
        ...events,
        { type: 'failed', detail: { response: out.response } },
      ]);
      return 'failed';
    case 'temporary': {
      const delays = deps.config.mailRetryDelaysSec;
      const delay = delays[email.attempts - 1];
      if (delay === undefined) {
        const reason = `gave up after ${email.attempts} attempts: ${out.response}`;
        await finish(deps, email.id, { status: 'failed', failureReason: reason }, [
          ...events,
          { type: 'failed', detail: { response: out.response, attempts: email.attempts } },
        ]);
        return 'failed';
      }
      const next = new Date(deps.clock.now().getTime() + delay * 1000);
      await finish(deps, email.id, { status: 'queued' }, [
        ...events,
        {
          type: 'deferred',
          detail: { response: out.response, attempt: email.attempts, nextAttemptAt: next.toISOString() },
        },
      ]);
      // pg-boss waits by the database clock; the delay is relative, so it holds under any app clock.
      await deps.jobs.enqueue(
        MAIL_DELIVER_JOB,
        { emailId: email.id },
        { startAfter: new Date(Date.now() + delay * 1000) },
      );
      return 'queued';
    }
  }
}

export const mailDeliverJob = defineJob({
  name: MAIL_DELIVER_JOB,
  schema: z.object({ emailId: z.uuid() }),
  handle: async ({ emailId }, { deps }: { deps: Deps }) => {
    await deliverEmail(deps, emailId);
  },
  // Two pollers, each taking a batch that runs at once: enough deliveries in flight to keep a pool of
  // SMTP connections busy. deliverEmail settles every outcome itself, so one mail's failure never fails
  // the batch.
  concurrency: 2,
  batchSize: 100,
  retry: { limit: 0, delaySec: 1 },
});
