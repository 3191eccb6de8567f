import { and, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { defineJob, type JobDef } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { addressOf, domainOf } from './addresses.ts';
import { storeInOutbox } from './outbox.ts';
import { type EmailStatus, mailEmails, mailEvents, mailSuppressions } from './tables.ts';
import { type OutgoingMail, type Rejection, SmtpPool } from './transport.ts';

// Delivery: one pg-boss job per e-mail (`mail.deliver`), queued with startAfter = scheduledAt, so
// scheduled mail lives in the database and survives restarts. The worker claims an e-mail with one
// conditional UPDATE (scheduled|queued → sending), the same guard cancel uses, so exactly one of them wins.
// Sandbox mail and all mail without SMTP_URL goes to the outbox.

export const MAIL_DELIVER_JOB = 'mail.deliver';
export type MailJobPayloads = { [MAIL_DELIVER_JOB]: { emailId: string } };

type EmailRow = typeof mailEmails.$inferSelect;
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

/** Moves the e-mail on from `sending` and records what happened, in one transaction. */
async function finish(deps: Deps, id: string, set: Partial<typeof mailEmails.$inferInsert>, events: Event[]) {
  const now = deps.clock.now();
  await deps.db.orm.transaction(async (tx) => {
    await tx
      .update(mailEmails)
      .set({ ...set, updatedAt: now })
      .where(and(eq(mailEmails.id, id), eq(mailEmails.status, 'sending')));
    if (events.length) {
      await tx
        .insert(mailEvents)
        .values(events.map((e) => ({ emailId: id, type: e.type, at: now, detail: e.detail ?? {} })));
    }
  });
}

async function suppress(deps: Deps, email: EmailRow, rejected: Rejection[]): Promise<void> {
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

async function claim(deps: Deps, emailId: string): Promise<EmailRow | null> {
  const now = deps.clock.now();
  return deps.db.orm.transaction(async (tx) => {
    const [row] = await tx
      .update(mailEmails)
      .set({ status: 'sending', attempts: sql`${mailEmails.attempts} + 1`, updatedAt: now })
      .where(and(eq(mailEmails.id, emailId), inArray(mailEmails.status, ['scheduled', 'queued'])))
      .returning();
    if (row)
      await tx
        .insert(mailEvents)
        .values({ emailId, type: 'sending', at: now, detail: { attempt: row.attempts } });
    return row ?? null;
  });
}

/** Runs one delivery attempt of an e-mail; a no-op when it was cancelled or already handled. */
export async function deliverEmail(deps: Deps, emailId: string): Promise<EmailStatus | null> {
  const email = await claim(deps, emailId);
  if (!email) return null;

  const blocked = await deps.db.orm
    .select({ address: mailSuppressions.address })
    .from(mailSuppressions)
    .where(
      and(
        eq(mailSuppressions.orgId, email.orgId),
        eq(mailSuppressions.environment, email.environment),
        inArray(mailSuppressions.address, email.toAddresses),
      ),
    );
  const blockedSet = new Set(blocked.map((b) => b.address));
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

export function mailJobs(deps: Deps): JobDef[] {
  return [
    defineJob({
      name: MAIL_DELIVER_JOB,
      schema: z.object({ emailId: z.uuid() }),
      handle: async ({ emailId }) => {
        await deliverEmail(deps, emailId);
      },
      // Enough parallel deliveries to keep every pooled SMTP connection busy.
      concurrency: Math.max(4, (deps.config.smtp?.poolSize ?? 2) * 2),
      retry: { limit: 0, delaySec: 1 },
    }) as JobDef,
  ];
}
