import type { JobDef } from './core/jobs.ts';
import { type WebhookJobPayloads, webhookJobs } from './core/webhooks.ts';
import type { Deps } from './deps.ts';
import { type MailJobPayloads, mailJobs } from './v1/mail/worker.ts';

// The typed registry of every background job; areas add their defineJob()s here. Handlers get the
// process's Deps through the factory.
export function jobDefs(deps: Deps): JobDef[] {
  return [...webhookJobs(deps), ...mailJobs(deps)];
}

export type JobRegistry = WebhookJobPayloads & MailJobPayloads;
