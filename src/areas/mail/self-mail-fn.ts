import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { defineFn } from '../../http/fn-kit.ts';
import { getUser } from '../identity/index.ts';
import { mailErrors } from './errors.ts';
import { SYSTEM_ORG_ID } from './system-mail.ts';
import { mailEmails } from './tables.ts';

// "Mail Pier sent you" (docs/decisions/103): on an installation without SMTP_URL nobody receives Pier's own
// mail, so a new account could never open its verification link. With the self mail view on (SELF_MAIL;
// `auto` = a loopback PUBLIC_URL, i.e. the operator's own machine) the signed-in person reads Pier's own
// messages to their own address, and nothing else: never a tenant's mail, never another address's.

export const listMySystemMailForCli = defineFn({
  name: 'listMySystemMailForCli',
  summary: "Pier's own messages to the signed-in account's address, newest first (no SMTP_URL only).",
  auth: { kind: 'user' },
  input: z.strictObject({ limit: z.number().int().min(1).max(50).default(20) }),
  output: z.object({
    items: z.array(
      z.object({
        id: z.string(),
        to: z.string(),
        subject: z.string(),
        text: z.string().nullable(),
        createdAt: z.string(),
      }),
    ),
  }),
  errors: ['SELF_MAIL_OFF'],
  handler: async ({ deps, caller }, input) => {
    if (!deps.config.selfMail) throw mailErrors.selfMailOff();
    const user = await getUser(deps, caller.userId);
    if (!user) return { items: [] };
    const address = user.email.toLowerCase();
    const rows = await deps.db.orm
      .select({
        id: mailEmails.id,
        subject: mailEmails.subject,
        text: mailEmails.text,
        createdAt: mailEmails.createdAt,
      })
      .from(mailEmails)
      .where(and(eq(mailEmails.orgId, SYSTEM_ORG_ID), sql`${address} = ANY(${mailEmails.toAddresses})`))
      .orderBy(desc(mailEmails.createdAt))
      .limit(input.limit);
    return {
      items: rows.map((r) => ({ ...r, to: address, createdAt: r.createdAt.toISOString() })),
    };
  },
});
