import { and, count, desc, eq } from 'drizzle-orm';
import { offsetPage } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { UUID_RE } from '../../platform/schemas.ts';
import { mailOutbox } from './tables.ts';
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

function summary(r: Row) {
  return {
    id: r.id,
    emailId: r.emailId,
    environment: r.environment as 'production' | 'sandbox',
    from: r.from,
    to: r.to,
    subject: r.subject,
    size: r.size,
    createdAt: r.createdAt.toISOString(),
  };
}

export async function listOutbox(
  deps: Deps,
  orgId: string,
  q: { limit: number; offset: number; environment?: 'production' | 'sandbox' },
) {
  const where = and(
    eq(mailOutbox.orgId, orgId),
    q.environment ? eq(mailOutbox.environment, q.environment) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select()
      .from(mailOutbox)
      .where(where)
      .orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm.select({ n: count() }).from(mailOutbox).where(where),
  ]);
  return offsetPage(rows.map(summary), total!.n, q);
}

export async function getOutboxMessage(deps: Deps, orgId: string, id: string) {
  if (!UUID_RE.test(id)) return null;
  const [r] = await deps.db.orm
    .select()
    .from(mailOutbox)
    .where(and(eq(mailOutbox.orgId, orgId), eq(mailOutbox.id, id)));
  if (!r) return null;
  return { ...summary(r), html: r.html, text: r.text, headers: r.headers, raw: r.raw };
}
