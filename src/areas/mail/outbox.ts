import { and, count, desc, eq, ilike, or, type SQL, sql } from 'drizzle-orm';
import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { type EmailStatus, mailEmails, mailOutbox } from './tables.ts';
import { composeMime, type OutgoingMail } from './transport.ts';

// The built-in outbox, Pier's Mailpit: with no SMTP_URL (and always for sandbox mail) the real MIME
// message is stored here and the e-mail is marked delivered. The dashboard's dev inbox reads it through
// the functions listOutboxForCli / getOutboxMessageForCli (docs/mail.md).

export async function storeInOutbox(
  deps: Deps,
  tenant: { orgId: string; environment: string },
  m: OutgoingMail,
): Promise<{ id: string }> {
  const { raw, headers } = await composeMime(m);
  const [row] = await deps.db.orm
    .insert(mailOutbox)
    .values({
      emailId: m.id,
      orgId: tenant.orgId,
      environment: tenant.environment,
      from: m.from,
      to: m.to,
      subject: m.subject,
      html: m.html,
      text: m.text,
      headers,
      raw,
      size: Buffer.byteLength(raw),
      createdAt: deps.clock.now(),
    })
    .returning({ id: mailOutbox.id });
  return row!;
}

type Row = typeof mailOutbox.$inferSelect;

function summary(r: Row, status: EmailStatus) {
  return {
    id: r.id,
    emailId: r.emailId,
    environment: r.environment as 'production' | 'sandbox',
    from: r.from,
    to: r.to,
    subject: r.subject,
    // The e-mail's status now (delivered, unless something happened to the record since).
    status,
    size: r.size,
    createdAt: r.createdAt.toISOString(),
  };
}

export type OutboxQuery = {
  limit: number;
  offset: number;
  environment?: 'production' | 'sandbox';
  /** Case-insensitive substring of the subject, the From header or any To address. */
  search?: string;
  status?: EmailStatus;
};

/** `%`, `_` and a backslash typed in the search box are literal characters, not patterns. */
function containsPattern(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listOutbox(deps: Deps, orgId: string, q: OutboxQuery) {
  let match: SQL | undefined;
  if (q.search) {
    const p = containsPattern(q.search);
    match = or(
      ilike(mailOutbox.subject, p),
      ilike(mailOutbox.from, p),
      sql`array_to_string(${mailOutbox.to}, ', ') ILIKE ${p}`,
    );
  }
  const where = and(
    eq(mailOutbox.orgId, orgId),
    q.environment ? eq(mailOutbox.environment, q.environment) : undefined,
    q.status ? eq(mailEmails.status, q.status) : undefined,
    match,
  );
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select({ m: mailOutbox, status: mailEmails.status })
      .from(mailOutbox)
      .innerJoin(mailEmails, eq(mailEmails.id, mailOutbox.emailId))
      .where(where)
      .orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm
      .select({ n: count() })
      .from(mailOutbox)
      .innerJoin(mailEmails, eq(mailEmails.id, mailOutbox.emailId))
      .where(where),
  ]);
  return offsetPage(
    rows.map((r) => summary(r.m, r.status)),
    total!.n,
    q,
  );
}

export async function getOutboxMessage(deps: Deps, orgId: string, id: string) {
  if (!isUuid(id)) return null;
  const [row] = await deps.db.orm
    .select({ m: mailOutbox, status: mailEmails.status })
    .from(mailOutbox)
    .innerJoin(mailEmails, eq(mailEmails.id, mailOutbox.emailId))
    .where(and(eq(mailOutbox.orgId, orgId), eq(mailOutbox.id, id)));
  if (!row) return null;
  const r = row.m;
  return { ...summary(r, row.status), html: r.html, text: r.text, headers: r.headers, raw: r.raw };
}
