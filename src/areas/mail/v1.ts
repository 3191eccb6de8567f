import { z } from 'zod';
import type { ErrorCode } from '../../core/errors.ts';
import { defineRoute, defineV1Routes, idParams } from '../../http/v1-kit.ts';
import * as mail from './emails.ts';
import {
  batchBody,
  batchResult,
  broadcastBody,
  broadcastResult,
  emailPage,
  emailSchema,
  emailWithEventsSchema,
  listQuery,
  MAX_RECIPIENTS,
  MAX_SCHEDULE_DAYS,
  sendBody,
  successSchema,
  suppressionListQuery,
  suppressionPage,
  templateBody,
  templateListQuery,
  templatePage,
  templatePatch,
  templateSchema,
} from './schema.ts';
import * as templates from './templates.ts';

// HTTP only: the contract's seven mail operations plus templates and the suppression list.

// SENDER_DOMAIN_NOT_VERIFIED (403): a live key's From is not on a verified sender domain (docs/mail.md).
const CONTENT_ERRORS: readonly ErrorCode[] = [
  'TEMPLATE_NOT_FOUND',
  'TEMPLATE_VARIABLE_MISSING',
  'IDEMPOTENCY_CONFLICT',
  'SENDER_DOMAIN_NOT_VERIFIED',
];

/** Where Pier is stricter than the contract (docs/mail.md, "Stricter than the contract"). */
const STRICTER =
  `Stricter than the contract: \`to\` and \`replyTo\` hold at most ${MAX_RECIPIENTS} addresses, and ` +
  `\`scheduledAt\` is at most ${MAX_SCHEDULE_DAYS} days ahead. html, text and templateId are all optional ` +
  '(a subject-only message is sent without a body); subject is required unless the template gives one.';

const routes = [
  defineRoute({
    method: 'POST',
    url: '/send',
    name: 'mail.send',
    summary: 'Send one e-mail (now, or at scheduledAt).',
    description: STRICTER,
    body: sendBody,
    response: emailSchema,
    errors: CONTENT_ERRORS,
    handler: ({ deps, caller }, { body }) => mail.sendEmail(deps, caller, body),
  }),
  defineRoute({
    method: 'GET',
    url: '/emails/:id',
    name: 'mail.get',
    summary: 'Get one e-mail with its event history.',
    params: idParams,
    response: emailWithEventsSchema,
    errors: ['EMAIL_NOT_FOUND'],
    handler: ({ deps, caller }, { params }) => mail.getEmail(deps, caller, params.id),
  }),
  defineRoute({
    method: 'GET',
    url: '/emails',
    name: 'mail.list',
    summary: 'List e-mails, newest first (limit default 50, max 100).',
    query: listQuery,
    response: emailPage,
    errors: [],
    handler: ({ deps, caller }, { query }) => mail.listEmails(deps, caller, query),
  }),
  defineRoute({
    method: 'POST',
    url: '/batch',
    name: 'mail.batch',
    summary: 'Send 1–100 e-mails with different content; all are validated before any is created.',
    description: STRICTER,
    body: batchBody,
    bodyLimit: 16 * 1024 * 1024,
    response: batchResult,
    errors: CONTENT_ERRORS,
    handler: ({ deps, caller }, { body }) => mail.sendBatch(deps, caller, body.emails),
  }),
  defineRoute({
    method: 'POST',
    url: '/broadcast',
    name: 'mail.broadcast',
    summary: 'Send the same e-mail to up to 1,000 recipients, one e-mail record each.',
    description: `Stricter than the contract: \`replyTo\` holds at most ${MAX_RECIPIENTS} addresses, \`scheduledAt\` is at most ${MAX_SCHEDULE_DAYS} days ahead, and html or text is required.`,
    body: broadcastBody,
    bodyLimit: 4 * 1024 * 1024,
    response: broadcastResult,
    errors: ['IDEMPOTENCY_CONFLICT', 'SENDER_DOMAIN_NOT_VERIFIED'],
    handler: ({ deps, caller }, { body }) => mail.sendBroadcast(deps, caller, body),
  }),
  defineRoute({
    method: 'POST',
    url: '/emails/:id/cancel',
    name: 'mail.cancel',
    summary: 'Cancel a scheduled (or still queued) e-mail before it is sent.',
    params: idParams,
    response: emailSchema,
    errors: ['EMAIL_NOT_FOUND', 'EMAIL_NOT_CANCELLABLE'],
    handler: ({ deps, caller }, { params }) => mail.cancelEmail(deps, caller, params.id),
  }),
  defineRoute({
    method: 'POST',
    url: '/emails/:id/resend',
    name: 'mail.resend',
    summary: 'Send an existing e-mail again as a new e-mail with the same content.',
    params: idParams,
    response: emailSchema,
    errors: ['EMAIL_NOT_FOUND', 'SENDER_DOMAIN_NOT_VERIFIED'],
    handler: ({ deps, caller }, { params }) => mail.resendEmail(deps, caller, params.id),
  }),
  defineRoute({
    method: 'POST',
    url: '/templates',
    name: 'mail.templates.create',
    summary: 'Create a template with {{variable}} placeholders.',
    body: templateBody,
    response: templateSchema,
    status: 201,
    errors: [],
    handler: ({ deps, caller }, { body }) => templates.createTemplate(deps, caller, body),
  }),
  defineRoute({
    method: 'GET',
    url: '/templates',
    name: 'mail.templates.list',
    summary: 'List templates.',
    query: templateListQuery,
    response: templatePage,
    errors: [],
    handler: ({ deps, caller }, { query }) => templates.listTemplates(deps, caller, query),
  }),
  defineRoute({
    method: 'GET',
    url: '/templates/:id',
    name: 'mail.templates.get',
    summary: 'Get a template.',
    params: idParams,
    response: templateSchema,
    errors: ['TEMPLATE_NOT_FOUND'],
    handler: ({ deps, caller }, { params }) => templates.getTemplate(deps, caller, params.id),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/templates/:id',
    name: 'mail.templates.update',
    summary: 'Change a template (e-mails already sent keep their content).',
    params: idParams,
    body: templatePatch,
    response: templateSchema,
    errors: ['TEMPLATE_NOT_FOUND'],
    handler: ({ deps, caller }, { params, body }) => templates.updateTemplate(deps, caller, params.id, body),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/templates/:id',
    name: 'mail.templates.delete',
    summary: 'Delete a template.',
    params: idParams,
    response: successSchema,
    errors: ['TEMPLATE_NOT_FOUND'],
    handler: ({ deps, caller }, { params }) => templates.deleteTemplate(deps, caller, params.id),
  }),
  defineRoute({
    method: 'GET',
    url: '/suppressions',
    name: 'mail.suppressions.list',
    summary: 'List addresses that hard-bounced; sends to them fail with reason suppressed.',
    query: suppressionListQuery,
    response: suppressionPage,
    errors: [],
    handler: ({ deps, caller }, { query }) => mail.listSuppressions(deps, caller, query),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/suppressions/:address',
    name: 'mail.suppressions.delete',
    summary: 'Remove an address from the suppression list.',
    params: z.object({ address: z.string().min(1).max(320) }),
    response: successSchema,
    errors: ['SUPPRESSION_NOT_FOUND'],
    handler: ({ deps, caller }, { params }) => mail.deleteSuppression(deps, caller, params.address),
  }),
];

export const mailV1 = defineV1Routes({ name: 'mail', prefix: '/mail', routes });
