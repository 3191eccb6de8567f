import type { Deps } from '../../deps.ts';
import { addressOf, domainOf } from './addresses.ts';
import { byPrimaryKey } from './by-primary-key.ts';
import { tenantSigningKey } from './domains.ts';
import { storeInOutbox } from './outbox.ts';
import type { MailEvent, Outcome } from './outcome-writer.ts';
import { SYSTEM_ORG_ID } from './tables.ts';
import type { DkimKey, OutgoingMail, SmtpOutcome, SmtpPool } from './transport.ts';
import { unsubscribeUrl } from './unsubscribe.ts';

/**
 * Who signs a message: a tenant's mail with its verified domain's own key; Pier's own mail with the
 * operator's DKIM_* key, and only when it is from the operator's domain. Nothing else is signed, so the
 * operator's key never vouches for a tenant's From.
 */
async function signingKey(deps: Deps, orgId: string, from: string): Promise<DkimKey | null> {
  const domain = domainOf(from);
  if (orgId !== SYSTEM_ORG_ID) return tenantSigningKey(deps, orgId, domain);
  const op = deps.config.dkim;
  return op && op.domain.toLowerCase() === domain
    ? { domainName: op.domain, keySelector: op.selector, privateKey: op.privateKey }
    : null;
}

// One delivery attempt of a batch of e-mails: claim them all in one statement (scheduled|queued →
// sending, the same guard cancel uses, so a cancel racing a send has exactly one winner), send each
// through the pooled transport (or the outbox), and turn each SMTP reply into an Outcome for the writer.

export type Claimed = {
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
  /** Set for broadcast mail, which carries one-click unsubscribe. */
  broadcastId: string | null;
};

// A job only claims the e-mail it was queued for: once the sweeper re-queued an e-mail under a new job,
// an older job for it (jobId given) finds nothing. Claiming, the `sending` events and the suppression
// lookup are one statement for the whole batch. \`m.id = ANY($3)\` is there for the planner: PGlite never
// analyzes tables (no autovacuum), and joining on the JSON rows alone made it scan all of mail_emails.
const CLAIM_SQL = `
WITH j AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS j(email_id uuid, job_id uuid)
), c AS (
  UPDATE mail_emails m SET status = 'sending', attempts = m.attempts + 1, updated_at = $2
  FROM j
  WHERE m.id = ANY($3::uuid[]) AND m.id = j.email_id AND m.status IN ('scheduled', 'queued')
    AND (j.job_id IS NULL OR m.job_id IS NULL OR m.job_id = j.job_id)
  RETURNING m.id, m.org_id, m.environment, m."from", m."to", m.to_addresses, m.subject, m.html, m.text,
    m.reply_to, m.message_id, m.attempts, m.broadcast_id
), e AS (
  INSERT INTO mail_events (email_id, type, at, detail)
  SELECT id, 'sending', $2, jsonb_build_object('attempt', attempts) FROM c
)
SELECT c.*, ARRAY(
  SELECT s.address FROM mail_suppressions s
  WHERE s.org_id = c.org_id AND s.environment = c.environment AND s.address = ANY(c.to_addresses)
) AS suppressed
FROM c`;

/** Claims the e-mails of a batch; those cancelled or already handled are left out. */
export async function claimBatch(
  deps: Deps,
  items: { emailId: string; jobId: string | null }[],
): Promise<Claimed[]> {
  const { rows } = await byPrimaryKey(deps, (q) =>
    q.query<Record<string, unknown>>(CLAIM_SQL, [
      JSON.stringify(items.map((i) => ({ email_id: i.emailId, job_id: i.jobId }))),
      deps.clock.now().toISOString(),
      items.map((i) => i.emailId),
    ]),
  );
  return rows.map((r) => ({
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
    broadcastId: (r.broadcast_id as string | null) ?? null,
  }));
}

/**
 * Broadcast mail (POST /mail/broadcast: one record per recipient) carries its recipient's one-click
 * unsubscribe URL; a broadcast is the bulk mail Gmail and Yahoo ask it of, as Resend and Postmark do
 * (docs/decisions/046). Other mail is the sender's own business and carries none.
 */
function unsubscribe(deps: Deps, email: Claimed, to: string[]): { unsubscribeUrl?: string } {
  if (!email.broadcastId || to.length !== 1) return {};
  return {
    unsubscribeUrl: unsubscribeUrl(deps, {
      orgId: email.orgId,
      environment: email.environment,
      address: addressOf(to[0]!),
      emailId: email.id,
    }),
  };
}

/** Sends one claimed e-mail and says what should be recorded; never throws for an SMTP failure. */
export async function attempt(deps: Deps, email: Claimed, pool: SmtpPool | null): Promise<Outcome> {
  const blockedSet = new Set(email.suppressed);
  const to = email.to.filter((t) => !blockedSet.has(addressOf(t)));
  const events: MailEvent[] = blockedSet.size
    ? [{ type: 'suppressed', detail: { addresses: [...blockedSet] } }]
    : [];
  const id = email.id;
  if (!to.length) {
    return {
      id,
      status: 'failed',
      failureReason: 'suppressed',
      events: [...events, { type: 'failed', detail: { reason: 'suppressed' } }],
    };
  }

  const mail: OutgoingMail = {
    id,
    from: email.from,
    to,
    subject: email.subject,
    html: email.html,
    text: email.text,
    replyTo: email.replyTo,
    messageId: email.messageId ?? `<${id}@${domainOf(email.from)}>`,
    ...unsubscribe(deps, email, to),
  };
  if (!pool) {
    const box = await storeInOutbox(deps, email, mail);
    const now = deps.clock.now();
    return {
      id,
      status: 'delivered',
      messageId: mail.messageId,
      sentAt: now,
      deliveredAt: now,
      events: [
        ...events,
        { type: 'sent', detail: { transport: 'outbox' } },
        { type: 'delivered', detail: { transport: 'outbox', outboxId: box.id } },
      ],
    };
  }

  const dkim = await signingKey(deps, email.orgId, email.from);
  const out = await pool.send(dkim ? { ...mail, dkim } : mail);
  return smtpOutcome(deps, email, mail, out, events);
}

/** What an SMTP answer means for the e-mail: sent (with per-recipient bounces), bounced, failed or retried. */
function smtpOutcome(
  deps: Deps,
  email: Claimed,
  mail: OutgoingMail,
  out: SmtpOutcome,
  events: MailEvent[],
): Outcome {
  const id = email.id;
  const tenant = { orgId: email.orgId, environment: email.environment };
  switch (out.kind) {
    case 'sent': {
      const bounced = out.rejected.filter((r) => r.code !== null && r.code >= 500);
      for (const r of out.rejected)
        events.push({ type: bounced.includes(r) ? 'bounced' : 'deferred', detail: { ...r } });
      return {
        id,
        status: 'sent',
        messageId: mail.messageId,
        sentAt: deps.clock.now(),
        events: [
          ...events,
          { type: 'sent', detail: { transport: 'smtp', response: out.response, accepted: out.accepted } },
        ],
        ...(bounced.length ? { suppress: { ...tenant, rejected: bounced } } : {}),
      };
    }
    case 'bounced':
      return {
        id,
        status: 'bounced',
        failureReason: out.response,
        events: [...events, { type: 'bounced', detail: { response: out.response, rejected: out.rejected } }],
        suppress: { ...tenant, rejected: out.rejected },
      };
    case 'failed':
      return {
        id,
        status: 'failed',
        failureReason: out.response,
        events: [...events, { type: 'failed', detail: { response: out.response } }],
      };
    case 'temporary': {
      const delay = deps.config.mailRetryDelaysSec[email.attempts - 1];
      if (delay === undefined) {
        return {
          id,
          status: 'failed',
          failureReason: `gave up after ${email.attempts} attempts: ${out.response}`,
          events: [
            ...events,
            { type: 'failed', detail: { response: out.response, attempts: email.attempts } },
          ],
        };
      }
      const next = new Date(deps.clock.now().getTime() + delay * 1000);
      return {
        id,
        status: 'queued',
        events: [
          ...events,
          {
            type: 'deferred',
            detail: { response: out.response, attempt: email.attempts, nextAttemptAt: next.toISOString() },
          },
        ],
        // The queue waits by the database clock; the delay is relative, so it holds under any app clock.
        retryAt: new Date(Date.now() + delay * 1000),
      };
    }
  }
}
