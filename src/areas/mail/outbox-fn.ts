import { z } from 'zod';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import { mailErrors } from './errors.ts';
import { getOutboxMessage, listOutbox } from './outbox.ts';
import { EMAIL_STATUSES, SYSTEM_ORG_ID } from './tables.ts';

// The dashboard's dev inbox (like Mailpit): the messages the built-in outbox kept, for members of the
// organization. Both environments unless one is asked for; `search` matches subject, From and To
// (case-insensitive substring), `status` the e-mail's status. See docs/mail.md.

const envSchema = z.enum(['production', 'sandbox']);
const summary = z.object({
  id: z.string(),
  emailId: z.string(),
  environment: envSchema,
  from: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  status: z.enum(EMAIL_STATUSES),
  size: z.number().int(),
  createdAt: z.string(),
});

export const listOutboxForCli = defineFn({
  name: 'listOutboxForCli',
  summary: "Lists the organization's outbox messages, newest first (dev inbox).",
  auth: { kind: 'user' },
  input: z.strictObject({
    orgSlug: slugInput,
    environment: envSchema.optional(),
    search: z.string().trim().max(200).optional(),
    status: z.enum(EMAIL_STATUSES).optional(),
    limit: z.number().int().min(1).max(100).default(50),
    offset: z.number().int().min(0).default(0),
  }),
  output: z.object({ items: z.array(summary), total: z.number().int(), hasMore: z.boolean() }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    return listOutbox(deps, org.id, { ...input, search: input.search || undefined });
  },
});

export const getOutboxMessageForCli = defineFn({
  name: 'getOutboxMessageForCli',
  summary: 'One outbox message: subject, addresses, text, HTML, headers and the raw MIME source.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, id: z.string().min(1).max(100) }),
  output: summary.extend({
    html: z.string().nullable(),
    text: z.string().nullable(),
    headers: z.array(z.tuple([z.string(), z.string()])),
    raw: z.string(),
  }),
  errors: ['ORG_NOT_FOUND', 'OUTBOX_MESSAGE_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    const msg = await getOutboxMessage(deps, org.id, input.id);
    if (!msg) throw mailErrors.outboxMessageNotFound();
    return msg;
  },
});

// Pier's own mail (verification and set-password links) kept by the built-in outbox, for the operator of
// an installation without SMTP_URL (development): `pier admin mail [--to E]`.
export const adminListSystemMail = defineFn({
  name: 'adminListSystemMail',
  summary: "Pier's own messages in the built-in outbox (no SMTP_URL), newest first, with their text.",
  auth: { kind: 'operator' },
  input: z.strictObject({
    to: z.string().trim().max(320).optional(),
    limit: z.number().int().min(1).max(100).default(20),
  }),
  output: z.object({ items: z.array(summary.extend({ text: z.string().nullable() })) }),
  errors: [],
  handler: async ({ deps }, input) => {
    const page = await listOutbox(deps, SYSTEM_ORG_ID, { limit: input.limit, offset: 0, search: input.to });
    const items = [];
    for (const m of page.items) {
      const full = await getOutboxMessage(deps, SYSTEM_ORG_ID, m.id);
      items.push({ ...m, text: full?.text ?? null });
    }
    return { items };
  },
});
