import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of v1 mail: e-mails, templates, suppressions, sender domains, unsubscribe links, the dev outbox.

export const mailCatalogue = defineCatalogue({
  TEMPLATE_VARIABLE_MISSING: { status: 400, message: 'The template needs a variable that was not given.' },
  DOMAIN_INVALID: { status: 400, message: 'That is not a domain name Pier can send from.' },
  SENDER_DOMAIN_NOT_VERIFIED: {
    status: 403,
    message: 'The sender domain is not verified for this organization.',
  },
  EMAIL_NOT_FOUND: { status: 404, message: 'E-mail not found.' },
  TEMPLATE_NOT_FOUND: { status: 404, message: 'Template not found.' },
  SUPPRESSION_NOT_FOUND: { status: 404, message: 'That address is not on the suppression list.' },
  UNSUBSCRIBE_TOKEN_INVALID: {
    status: 404,
    message: 'This unsubscribe link is not valid; copy the whole link from the e-mail.',
  },
  DOMAIN_NOT_FOUND: { status: 404, message: 'Sender domain not found.' },
  OUTBOX_MESSAGE_NOT_FOUND: { status: 404, message: 'Outbox message not found.' },
  SELF_MAIL_OFF: {
    status: 403,
    message:
      "This Pier sends real e-mail (or its operator turned SELF_MAIL off): read Pier's mail in your inbox.",
  },
  EMAIL_NOT_CANCELLABLE: { status: 409, message: 'Only scheduled or queued e-mails can be cancelled.' },
  DOMAIN_EXISTS: { status: 409, message: 'The domain is already added to this organization.' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof mailCatalogue> {}
}

const error = mailCatalogue.error;

export const mailErrors = {
  emailNotFound: () => error('EMAIL_NOT_FOUND'),
  emailNotCancellable: (status: string) =>
    error(
      'EMAIL_NOT_CANCELLABLE',
      `This e-mail is ${status}; only scheduled or queued e-mails can be cancelled.`,
    ),
  templateNotFound: () => error('TEMPLATE_NOT_FOUND'),
  templateVariableMissing: (name: string) =>
    error('TEMPLATE_VARIABLE_MISSING', `The template needs the variable '${name}'.`),
  suppressionNotFound: () => error('SUPPRESSION_NOT_FOUND'),
  senderDomainNotVerified: (domain: string) =>
    error(
      'SENDER_DOMAIN_NOT_VERIFIED',
      `The sender domain '${domain}' is not verified for this organization; add it with domains add and publish its DNS records, or send with a test key.`,
    ),
  unsubscribeTokenInvalid: () => error('UNSUBSCRIBE_TOKEN_INVALID'),
  domainNotFound: () => error('DOMAIN_NOT_FOUND'),
  domainExists: (domain: string) =>
    error('DOMAIN_EXISTS', `The domain '${domain}' is already added to this organization.`),
  domainInvalid: (domain: string) =>
    error('DOMAIN_INVALID', `'${domain.slice(0, 100)}' is not a domain name Pier can send from.`),
  outboxMessageNotFound: () => error('OUTBOX_MESSAGE_NOT_FOUND'),
  selfMailOff: () => error('SELF_MAIL_OFF'),
} as const;
