import { and, asc, eq, sql } from 'drizzle-orm';
import { SYSTEM_ORG_ID } from '../src/areas/mail/system-mail.ts';
import { mailEmails } from '../src/areas/mail/tables.ts';
import type { Deps } from '../src/deps.ts';

/** Pier's own messages to an address, oldest first (accepted for delivery; the queue need not run). */
export async function systemMailTo(deps: Deps, address: string) {
  return deps.db.orm
    .select({ subject: mailEmails.subject, text: mailEmails.text, from: mailEmails.from })
    .from(mailEmails)
    .where(
      and(
        eq(mailEmails.orgId, SYSTEM_ORG_ID),
        sql`${address.toLowerCase()} = ANY(${mailEmails.toAddresses})`,
      ),
    )
    .orderBy(asc(mailEmails.createdAt));
}

/** The token of the newest link to `page` (set-password or verify-email) mailed to the address. */
export async function mailedToken(deps: Deps, address: string, page: 'set-password' | 'verify-email') {
  const mails = await systemMailTo(deps, address);
  const re = new RegExp(`/${page}#token=([A-Za-z0-9_-]{43})`);
  for (const m of mails.reverse()) {
    const hit = re.exec(m.text ?? '');
    if (hit) return hit[1]!;
  }
  return null;
}
