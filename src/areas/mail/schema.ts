import { z } from 'zod';
import { offsetPageSchema, offsetQuery } from '../../core/pagination.ts';
import { mailboxInput, mailboxList } from './addresses.ts';
import { EMAIL_STATUSES } from './tables.ts';

// The zod contract of the mail area (requests validated with these; /v1/openapi.json generated from them).

export const MAX_RECIPIENTS = 50;
export const MAX_BATCH = 100;
export const MAX_BROADCAST = 1000;
export const MAX_SCHEDULE_DAYS = 30;

const subject = z.string().trim().min(1).max(998);
const html = z.string().max(2_000_000);
const text = z.string().max(2_000_000);
const templateVariables = z.record(
  z.string().max(100),
  z.union([z.string(), z.number(), z.boolean(), z.null()]),
);
const scheduledAt = z.iso
  .datetime({ offset: true })
  .describe('ISO 8601, in the future, at most 30 days ahead');

export const sendBody = z
  .strictObject({
    from: mailboxInput,
    to: mailboxList(MAX_RECIPIENTS),
    subject: subject.optional(),
    html: html.optional(),
    text: text.optional(),
    replyTo: mailboxList(MAX_RECIPIENTS).optional(),
    templateId: z.string().max(100).optional(),
    templateVariables: templateVariables.optional(),
    scheduledAt: scheduledAt.optional(),
  })
  // html, text and templateId are all optional in the contract: a subject-only message is sent without a body.
  .refine((b) => b.subject !== undefined || b.templateId !== undefined, {
    message: 'subject is required',
    path: ['subject'],
  });
export type SendBody = z.infer<typeof sendBody>;

export const batchBody = z.strictObject({ emails: z.array(sendBody).min(1).max(MAX_BATCH) });

export const broadcastBody = z
  .strictObject({
    from: mailboxInput,
    to: z.array(mailboxInput).min(1).max(MAX_BROADCAST),
    subject,
    html: html.optional(),
    text: text.optional(),
    replyTo: mailboxList(MAX_RECIPIENTS).optional(),
    scheduledAt: scheduledAt.optional(),
  })
  .refine((b) => b.html !== undefined || b.text !== undefined, { message: 'give html or text' });
export type BroadcastBody = z.infer<typeof broadcastBody>;

export const eventSchema = z.object({
  type: z.string(),
  at: z.string(),
  detail: z.record(z.string(), z.unknown()),
});

export const emailSchema = z.object({
  id: z.string(),
  object: z.literal('email'),
  from: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  replyTo: z.array(z.string()).nullable(),
  status: z.enum(EMAIL_STATUSES),
  failureReason: z.string().nullable(),
  templateId: z.string().nullable(),
  broadcastId: z.string().nullable(),
  resentFrom: z.string().nullable(),
  attempts: z.number().int(),
  scheduledAt: z.string().nullable(),
  createdAt: z.string(),
  sentAt: z.string().nullable(),
  deliveredAt: z.string().nullable(),
});
export type EmailOut = z.infer<typeof emailSchema>;

export const emailWithEventsSchema = emailSchema.extend({ events: z.array(eventSchema) });

export const listQuery = offsetQuery({ defaultLimit: 50, maxLimit: 100 }).extend({
  status: z.enum(EMAIL_STATUSES).optional(),
  from: z.string().max(320).optional(),
  to: z.string().max(320).optional(),
  broadcastId: z.string().max(100).optional(),
});
export type ListQuery = z.infer<typeof listQuery>;

export const emailPage = offsetPageSchema(emailSchema);
export const batchResult = z.object({ emails: z.array(emailSchema) });
export const broadcastResult = z.object({
  broadcastId: z.string(),
  total: z.number().int(),
  emails: z.array(emailSchema),
});

export const templateBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    subject,
    html: html.optional(),
    text: text.optional(),
  })
  .refine((b) => b.html !== undefined || b.text !== undefined, { message: 'give html or text' });
export const templatePatch = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    subject: subject.optional(),
    html: html.nullable().optional(),
    text: text.nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' });
export const templateSchema = z.object({
  id: z.string(),
  name: z.string(),
  subject: z.string(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  variables: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const templateListQuery = offsetQuery({ defaultLimit: 50, maxLimit: 100 });
export const templatePage = offsetPageSchema(templateSchema);

export const suppressionSchema = z.object({
  address: z.string(),
  reason: z.string(),
  emailId: z.string().nullable(),
  createdAt: z.string(),
});
export const suppressionListQuery = offsetQuery({ defaultLimit: 50, maxLimit: 100 });
export const suppressionPage = offsetPageSchema(suppressionSchema);
export const successSchema = z.object({ success: z.literal(true) });
