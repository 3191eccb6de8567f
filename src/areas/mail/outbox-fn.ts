import { z } from 'zod';
import { errors } from '../../core/errors.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { slugInput } from '../../http/fn-schemas.ts';
import { orgForUser } from '../orgs/index.ts';
import { getOutboxMessage, listOutbox } from './outbox.ts';
import { EMAIL_STATUSES } from './tables.ts';

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
    if (!msg) throw errors.outboxMessageNotFound();
    return msg;
  },
});
