import { defineArea } from '../manifest.ts';
import { getOutboxMessageForCli, listOutboxForCli } from './outbox-fn.ts';
import { MAIL_SWEEP_CRON, MAIL_SWEEP_JOB, mailSweepJob } from './sweeper.ts';
import { mailV1 } from './v1.ts';
import { closeMailTransport, mailDeliverJob } from './worker.ts';

// Mail: v1 e-mails, batches, templates and events; delivery over SMTP (pooled, DKIM) or to the built-in
// outbox that the dashboard's dev inbox shows.

export const mailArea = defineArea({
  name: 'mail',
  fns: [listOutboxForCli, getOutboxMessageForCli],
  v1: [mailV1],
  jobs: [mailDeliverJob, mailSweepJob],
  schedules: [{ job: MAIL_SWEEP_JOB, cron: MAIL_SWEEP_CRON }],
  migrations: [{ area: 'mail', schema: ['src/areas/mail/tables.ts'] }],
  stop: closeMailTransport,
});
