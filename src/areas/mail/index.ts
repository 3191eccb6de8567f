import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import {
  addMailDomainForCli,
  getMailDomainForCli,
  listMailDomainsForCli,
  removeMailDomainForCli,
  verifyMailDomainForCli,
} from './domains-fn.ts';
import { mailCatalogue } from './errors.ts';
import { adminListSystemMail, getOutboxMessageForCli, listOutboxForCli } from './outbox-fn.ts';
import { listMySystemMailForCli } from './self-mail-fn.ts';
import { MAIL_SWEEP_CRON, MAIL_SWEEP_JOB, mailSweepJob } from './sweeper.ts';
import { sendSystemMail } from './system-mail.ts';
import { unsubscribeRoutes } from './unsubscribe.ts';
import { getMailUsageByDayForCli } from './usage-fn.ts';
import { mailV1 } from './v1.ts';
import { closeMailTransport, mailDeliverJob } from './worker.ts';

// Mail: v1 e-mails, batches, templates and events; sender domains (DNS-verified, each with its own DKIM
// key); delivery over SMTP (pooled, signed with the From domain's key) or to the built-in outbox that the
// dashboard's dev inbox shows. Pier's own mail (verification links, invitations) goes the same way.

export const mailArea = defineArea({
  name: 'mail',
  errors: [mailCatalogue],
  fns: [
    listOutboxForCli,
    getOutboxMessageForCli,
    adminListSystemMail,
    listMySystemMailForCli,
    getMailUsageByDayForCli,
    addMailDomainForCli,
    listMailDomainsForCli,
    getMailDomainForCli,
    verifyMailDomainForCli,
    removeMailDomainForCli,
  ],
  v1: [mailV1],
  http: unsubscribeRoutes,
  jobs: [mailDeliverJob, mailSweepJob],
  schedules: [{ job: MAIL_SWEEP_JOB, cron: MAIL_SWEEP_CRON }],
  migrations: [{ area: 'mail', schema: ['src/areas/mail/tables.ts'] }],
  stop: closeMailTransport,
  provides: { sendSystemMail },
  // Dashboard reads: the usage chart's series is not a tool an agent needs (tools/list stays small).
  notTools: ['adminListSystemMail', 'listMySystemMailForCli', 'getMailUsageByDayForCli'],
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'mail.deliver': PayloadOf<typeof mailDeliverJob>;
    'mail.sweep': PayloadOf<typeof mailSweepJob>;
  }
}
