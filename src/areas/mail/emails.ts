import { and, asc, count, desc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { positionalInserts } from '../../core/db/positional.ts';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import type { ApiKeyCaller } from '../../http/v1-kit.ts';
import { addressOf } from './addresses.ts';
import { assertSenderDomains } from './domains.ts';
import { mailErrors } from './errors.ts';
import {
  type BroadcastBody,
  type EmailOut,
  type ListQuery,
  MAX_SCHEDULE_DAYS,
  type SendBody,
} from './schema.ts';
import { mailEmails, mailEvents, mailSuppressions, SYSTEM_ORG_ID } from './tables.ts';
import { findTemplate, renderTemplate } from './templates.ts';
import { queueDeliveries } from './worker.ts';

// Mail's logic: accept (validate everything first, then insert all records, their first event and their
// delivery jobs in one transaction), read, cancel, resend, suppressions. Delivery is worker.ts.

type EmailRow = typeof mailEmails.$inferSelect;
type NewEmail = typeof mailEmails.$inferInsert;

export function toEmailOut(r: EmailRow): EmailOut {
  return {
    id: r.id,
    object: 'email',
    from: r.from,
    to: r.to,
    subject: r.subject,
    html: r.html,
    text: r.text,
    replyTo: r.replyTo,
    status: r.status,
    failureReason: r.failureReason,
    templateId: r.templateId,
    broadcastId: r.broadcastId,
    resentFrom: r.resentFrom,
    attempts: r.attempts,
    scheduledAt: r.scheduledAt?.toISOString() ?? null,
    createdAt: r.createdAt.toISOString(),
    sentAt: r.sentAt?.toISOString() ?? null,
    deliveredAt: r.deliveredAt?.toISOString() ?? null,
  };
}

const tenant = (c: ApiKeyCaller) =>
  and(eq(mailEmails.orgId, c.orgId), eq(mailEmails.environment, c.environment));

function checkSchedule(deps: Deps, at: string | undefined): Date | null {
  if (at === undefined) return null;
  const when = new Date(at);
  const now = deps.clock.now().getTime();
  if (when.getTime() <= now) throw errors.validation('scheduledAt must be in the future.');
  if (when.getTime() > now + MAX_SCHEDULE_DAYS * 86_400_000) {
    throw errors.validation(`scheduledAt must be at most ${MAX_SCHEDULE_DAYS} days ahead.`);
  }
  return when;
}

/**
 * Live keys send only from the organization's verified domains (test keys from any address: their mail
 * stays in the dev inbox). Checked for the whole request before anything is queued.
 */
async function checkSenders(deps: Deps, c: ApiKeyCaller, froms: string[]): Promise<void> {
  if (c.environment !== 'production' || c.orgId === SYSTEM_ORG_ID) return;
  await assertSenderDomains(deps, c.orgId, froms);
}

/** Turns a send body into a record to insert (template rendered, schedule checked); throws on bad input. */
async function prepare(
  deps: Deps,
  c: ApiKeyCaller,
  b: SendBody,
  extra: Partial<NewEmail> = {},
): Promise<NewEmail> {
  let content = { subject: b.subject ?? '', html: b.html ?? null, text: b.text ?? null };
  if (b.templateId !== undefined) {
    const t = await findTemplate(deps, c, b.templateId);
    content = renderTemplate(
      { subject: b.subject ?? t.subject, html: b.html ?? t.html, text: b.text ?? t.text },
      b.templateVariables ?? {},
    );
  }
  const scheduledAt = checkSchedule(deps, b.scheduledAt);
  const now = deps.clock.now();
  return {
    orgId: c.orgId,
    environment: c.environment,
    from: b.from,
    fromAddress: addressOf(b.from),
    to: b.to,
    toAddresses: b.to.map(addressOf),
    subject: content.subject,
    html: content.html,
    text: content.text,
    replyTo: b.replyTo ?? null,
    templateId: b.templateId ?? null,
    status: scheduledAt ? 'scheduled' : 'queued',
    scheduledAt,
    createdAt: now,
    updatedAt: now,
    ...extra,
  };
}

const EMAIL_COLUMNS = [
  'id',
  'org_id',
  'environment',
  'from',
  'from_address',
  'to',
  'to_addresses',
  'subject',
  'html',
  'text',
  'reply_to',
  'template_id',
  'broadcast_id',
  'resent_from',
  'status',
  'scheduled_at',
  'created_at',
  'updated_at',
  'job_id',
] as const;
const arrays = { to: textArray, to_addresses: textArray, reply_to: textArray };
function textArray(p: string) {
  return `${p}::text[]`;
}

/**
 * Inserts the e-mails, their first events and their delivery jobs in one transaction (one multi-row
 * INSERT each), so an accepted e-mail always has its job.
 */
async function insertAndQueue(deps: Deps, rows: NewEmail[]): Promise<EmailRow[]> {
  const now = deps.clock.now();
  const full: EmailRow[] = rows.map((r) => ({
    id: crypto.randomUUID(),
    jobId: crypto.randomUUID(),
    replyTo: null,
    templateId: null,
    broadcastId: null,
    resentFrom: null,
    failureReason: null,
    messageId: null,
    attempts: 0,
    scheduledAt: null,
    sentAt: null,
    deliveredAt: null,
    html: null,
    text: null,
    ...r,
  })) as EmailRow[];
  const emailRows = full.map((e) => [
    e.id,
    e.orgId,
    e.environment,
    e.from,
    e.fromAddress,
    e.to,
    e.toAddresses,
    e.subject,
    e.html,
    e.text,
    e.replyTo,
    e.templateId,
    e.broadcastId,
    e.resentFrom,
    e.status,
    e.scheduledAt?.toISOString() ?? null,
    e.createdAt.toISOString(),
    e.updatedAt.toISOString(),
    e.jobId,
  ]);
  const eventRows = full.map((e) => [
    e.id,
    e.status,
    now.toISOString(),
    JSON.stringify(e.scheduledAt ? { scheduledAt: e.scheduledAt.toISOString() } : {}),
  ]);
  await deps.db.transaction(async (tx) => {
    for (const st of positionalInserts('mail_emails', EMAIL_COLUMNS, emailRows, { exprs: arrays }))
      await tx.query(st.text, st.params);
    for (const st of positionalInserts('mail_events', ['email_id', 'type', 'at', 'detail'], eventRows, {
      exprs: { detail: (p) => `${p}::jsonb` },
    }))
      await tx.query(st.text, st.params);
    await queueDeliveries(
      deps,
      tx,
      full.map((e) => ({ id: e.id, jobId: e.jobId!, scheduledAt: e.scheduledAt })),
    );
  });
  return full;
}

export async function sendEmail(deps: Deps, c: ApiKeyCaller, b: SendBody): Promise<EmailOut> {
  await checkSenders(deps, c, [b.from]);
  const [row] = await insertAndQueue(deps, [await prepare(deps, c, b)]);
  return toEmailOut(row!);
}

/** All or nothing: every item is checked before any record is created. */
export async function sendBatch(deps: Deps, c: ApiKeyCaller, items: SendBody[]) {
  await checkSenders(
    deps,
    c,
    items.map((b) => b.from),
  );
  const rows: NewEmail[] = [];
  for (const [i, b] of items.entries()) {
    try {
      rows.push(await prepare(deps, c, b));
    } catch (err) {
      if (err instanceof Error && 'code' in err) err.message = `emails.${i}: ${err.message}`;
      throw err;
    }
  }
  return { emails: (await insertAndQueue(deps, rows)).map(toEmailOut) };
}

export async function sendBroadcast(deps: Deps, c: ApiKeyCaller, b: BroadcastBody) {
  await checkSenders(deps, c, [b.from]);
  const broadcastId = crypto.randomUUID();
  const recipients = [...new Map(b.to.map((to) => [addressOf(to), to])).values()];
  const base = { from: b.from, subject: b.subject, html: b.html, text: b.text, replyTo: b.replyTo };
  const rows: NewEmail[] = [];
  for (const to of recipients) {
    rows.push(await prepare(deps, c, { ...base, to: [to], scheduledAt: b.scheduledAt }, { broadcastId }));
  }
  const emails = (await insertAndQueue(deps, rows)).map(toEmailOut);
  return { broadcastId, total: emails.length, emails };
}

async function findEmail(deps: Deps, c: ApiKeyCaller, id: string): Promise<EmailRow> {
  if (!isUuid(id)) throw mailErrors.emailNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(mailEmails)
    .where(and(tenant(c), eq(mailEmails.id, id)));
  if (!row) throw mailErrors.emailNotFound();
  return row;
}

export async function getEmail(deps: Deps, c: ApiKeyCaller, id: string) {
  const row = await findEmail(deps, c, id);
  const events = await deps.db.orm
    .select()
    .from(mailEvents)
    .where(eq(mailEvents.emailId, row.id))
    .orderBy(asc(mailEvents.seq));
  return {
    ...toEmailOut(row),
    events: events.map((e) => ({ type: e.type, at: e.at.toISOString(), detail: e.detail })),
  };
}

export async function listEmails(deps: Deps, c: ApiKeyCaller, q: ListQuery) {
  const filters: (SQL | undefined)[] = [tenant(c)];
  if (q.status) filters.push(eq(mailEmails.status, q.status));
  if (q.from) filters.push(eq(mailEmails.fromAddress, addressOf(q.from)));
  if (q.to) filters.push(sql`${addressOf(q.to)} = ANY(${mailEmails.toAddresses})`);
  if (q.broadcastId) {
    if (!isUuid(q.broadcastId)) return offsetPage([], 0, q);
    filters.push(eq(mailEmails.broadcastId, q.broadcastId));
  }
  const where = and(...filters);
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select()
      .from(mailEmails)
      .where(where)
      .orderBy(desc(mailEmails.createdAt), desc(mailEmails.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm.select({ n: count() }).from(mailEmails).where(where),
  ]);
  return offsetPage(rows.map(toEmailOut), total!.n, q);
}

/**
 * Cancels a scheduled or queued e-mail. The status check and change are one conditional UPDATE, and the
 * worker claims an e-mail the same way, so a cancel racing a send has exactly one winner.
 */
export async function cancelEmail(deps: Deps, c: ApiKeyCaller, id: string): Promise<EmailOut> {
  const current = await findEmail(deps, c, id);
  const now = deps.clock.now();
  const cancelled = await deps.db.orm.transaction(async (tx) => {
    const [row] = await tx
      .update(mailEmails)
      .set({ status: 'cancelled', updatedAt: now })
      .where(
        and(tenant(c), eq(mailEmails.id, current.id), inArray(mailEmails.status, ['scheduled', 'queued'])),
      )
      .returning();
    if (row) await tx.insert(mailEvents).values({ emailId: row.id, type: 'cancelled', at: now });
    return row;
  });
  if (cancelled) return toEmailOut(cancelled);
  const latest = await findEmail(deps, c, id);
  throw mailErrors.emailNotCancellable(latest.status);
}

/** A new e-mail with the same content, queued now. */
export async function resendEmail(deps: Deps, c: ApiKeyCaller, id: string): Promise<EmailOut> {
  const src = await findEmail(deps, c, id);
  await checkSenders(deps, c, [src.from]);
  const now = deps.clock.now();
  const [row] = await insertAndQueue(deps, [
    {
      orgId: c.orgId,
      environment: c.environment,
      from: src.from,
      fromAddress: src.fromAddress,
      to: src.to,
      toAddresses: src.toAddresses,
      subject: src.subject,
      html: src.html,
      text: src.text,
      replyTo: src.replyTo,
      templateId: src.templateId,
      resentFrom: src.id,
      status: 'queued',
      createdAt: now,
      updatedAt: now,
    },
  ]);
  return toEmailOut(row!);
}

const suppressionTenant = (c: ApiKeyCaller) =>
  and(eq(mailSuppressions.orgId, c.orgId), eq(mailSuppressions.environment, c.environment));

export async function listSuppressions(deps: Deps, c: ApiKeyCaller, q: { limit: number; offset: number }) {
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select()
      .from(mailSuppressions)
      .where(suppressionTenant(c))
      .orderBy(desc(mailSuppressions.createdAt), asc(mailSuppressions.address))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm.select({ n: count() }).from(mailSuppressions).where(suppressionTenant(c)),
  ]);
  const items = rows.map((r) => ({
    address: r.address,
    reason: r.reason,
    emailId: r.emailId,
    createdAt: r.createdAt.toISOString(),
  }));
  return offsetPage(items, total!.n, q);
}

export async function deleteSuppression(deps: Deps, c: ApiKeyCaller, address: string) {
  const rows = await deps.db.orm
    .delete(mailSuppressions)
    .where(and(suppressionTenant(c), eq(mailSuppressions.address, addressOf(address))))
    .returning({ address: mailSuppressions.address });
  if (!rows.length) throw mailErrors.suppressionNotFound();
  return { success: true as const };
}
