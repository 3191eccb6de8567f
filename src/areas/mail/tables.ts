import { sql } from 'drizzle-orm';
import {
  bigserial,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

// Mail: every row carries its organization and environment (production for live keys, sandbox for test
// keys); every query filters on both.

export const EMAIL_STATUSES = [
  'scheduled',
  'queued',
  'sending',
  'sent',
  'delivered',
  'bounced',
  'failed',
  'cancelled',
] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export const mailEmails = pgTable(
  'mail_emails',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    from: text('from').notNull(),
    /** Lower-cased address part of `from`, for the list filter. */
    fromAddress: text('from_address').notNull(),
    to: text('to').array().notNull(),
    /** Lower-cased address parts of `to`, for the list filter and the suppression check. */
    toAddresses: text('to_addresses').array().notNull(),
    subject: text('subject').notNull(),
    html: text('html'),
    text: text('text'),
    replyTo: text('reply_to').array(),
    templateId: uuid('template_id'),
    broadcastId: uuid('broadcast_id'),
    resentFrom: uuid('resent_from'),
    status: text('status').$type<EmailStatus>().notNull(),
    failureReason: text('failure_reason'),
    messageId: text('message_id'),
    attempts: integer('attempts').notNull().default(0),
    /** The delivery job that may claim this e-mail; the sweeper re-queues mail whose job is gone. */
    jobId: uuid('job_id'),
    scheduledAt: timestamp('scheduled_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    index('mail_emails_tenant_created_idx').on(t.orgId, t.environment, t.createdAt),
    index('mail_emails_broadcast_idx').on(t.broadcastId).where(sql`broadcast_id IS NOT NULL`),
    // The sweeper's scan: only mail still waiting to go out.
    index('mail_emails_pending_idx').on(t.updatedAt).where(sql`status IN ('queued', 'sending')`),
  ],
);

// An e-mail's history. Keyed by (email_id, seq), with no surrogate id and no foreign key: these rows are
// written for every mail at every step of delivery, and on PGlite a random uuid per row (drawn through
// JavaScript) and a foreign-key check per row were most of the delivery's database time. Every statement
// that writes events takes the e-mail ids from rows it just read or wrote in mail_emails, and e-mails are
// never deleted (docs/decisions/027).
export const mailEvents = pgTable(
  'mail_events',
  {
    emailId: uuid('email_id').notNull(),
    /** Insertion order, so events recorded in the same instant keep their order. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    type: text('type').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull(),
    detail: jsonb('detail').$type<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [primaryKey({ columns: [t.emailId, t.seq] })],
);

export const mailTemplates = pgTable(
  'mail_templates',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    name: text('name').notNull(),
    subject: text('subject').notNull(),
    html: text('html'),
    text: text('text'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('mail_templates_tenant_idx').on(t.orgId, t.environment, t.createdAt)],
);

export const mailSuppressions = pgTable(
  'mail_suppressions',
  {
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    /** Lower-cased address. */
    address: text('address').notNull(),
    reason: text('reason').notNull(),
    emailId: uuid('email_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.environment, t.address] })],
);

/** The built-in outbox (no SMTP_URL, or sandbox mail): the real MIME message, shown in the dev inbox. */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    emailId: uuid('email_id')
      .notNull()
      .references(() => mailEmails.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    from: text('from').notNull(),
    to: text('to').array().notNull(),
    subject: text('subject').notNull(),
    html: text('html'),
    text: text('text'),
    headers: jsonb('headers').$type<[string, string][]>().notNull(),
    raw: text('raw').notNull(),
    size: integer('size').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('mail_outbox_tenant_idx').on(t.orgId, t.createdAt)],
);

/** The organization id of Pier's own mail (verification links, invitations): no organization has it. */
export const SYSTEM_ORG_ID = '00000000-0000-0000-0000-000000000000';

export type DomainRecordState = 'pending' | 'verified' | 'failed';

/**
 * Sender domains (docs/decisions/033): live mail goes out only from a domain its organization proved it
 * controls. Each has its own DKIM key pair, made by Pier; the private key is stored encrypted with the
 * keyring. `records` keeps each DNS record's state from the last check.
 */
export const mailDomains = pgTable(
  'mail_domains',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    /** Lower-case, no trailing dot. */
    domain: text('domain').notNull(),
    verificationToken: text('verification_token').notNull(),
    dkimSelector: text('dkim_selector').notNull(),
    /** base64 of the DER SubjectPublicKeyInfo: the p= of the DKIM record. */
    dkimPublicKey: text('dkim_public_key').notNull(),
    dkimPrivateKeyEnc: text('dkim_private_key_enc').notNull(),
    status: text('status').$type<'pending' | 'verified'>().notNull(),
    records: jsonb('records')
      .$type<Record<'verification' | 'dkim' | 'spf' | 'dmarc', DomainRecordState>>()
      .notNull(),
    lastCheckedAt: timestamp('last_checked_at', { withTimezone: true }),
    verifiedAt: timestamp('verified_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('mail_domains_org_domain_uq').on(t.orgId, t.domain)],
);
