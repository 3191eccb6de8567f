import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of workflows and their runs.

export const workflowsCatalogue = defineCatalogue({
  WORKFLOW_INVALID: { status: 400, message: 'The workflow has problems.' },
  WORKFLOW_VARIABLES_INVALID: { status: 400, message: 'Bad variables.' },
  WORKFLOW_NOT_FOUND: { status: 404, message: 'Workflow not found.' },
  WORKFLOW_RUN_NOT_FOUND: { status: 404, message: 'Workflow run not found.' },
  WORKFLOW_SLUG_TAKEN: { status: 409, message: 'A workflow with that slug already exists in this project.' },
  WORKFLOW_RUN_NOT_CANCELLABLE: { status: 409, message: 'Only pending or running runs can be cancelled.' },
  WORKFLOW_RUN_NOT_RETRYABLE: { status: 409, message: 'Only failed runs can be retried.' },
  WORKFLOW_RATE_LIMITED: { status: 429, message: "The workflow's start rate limit is reached." },
  WORKFLOW_STEP_NOT_WAITING: { status: 409, message: 'The step is not waiting for an approval.' },
  WORKFLOW_APPROVAL_USED: { status: 409, message: 'This approval was already given or refused.' },
  WORKFLOW_APPROVAL_NOT_FOUND: { status: 404, message: 'This approval link is not valid.' },
  WORKFLOW_WEBHOOK_NOT_FOUND: { status: 404, message: 'No workflow webhook at this URL.' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof workflowsCatalogue> {}
}

const error = workflowsCatalogue.error;

export const workflowsErrors = {
  workflowNotFound: () => error('WORKFLOW_NOT_FOUND'),
  workflowRunNotFound: () => error('WORKFLOW_RUN_NOT_FOUND'),
  workflowInvalid: (problems: string[]) =>
    error('WORKFLOW_INVALID', `The workflow has ${problems.length} problem(s): ${problems.join(' ')}`),
  workflowSlugTaken: (slug: string) =>
    error('WORKFLOW_SLUG_TAKEN', `A workflow '${slug}' already exists in this project.`),
  workflowVariablesInvalid: (problems: string[]) =>
    error('WORKFLOW_VARIABLES_INVALID', `Bad variables: ${problems.join(' ')}`),
  workflowRunNotCancellable: (status: string) =>
    error(
      'WORKFLOW_RUN_NOT_CANCELLABLE',
      `The run is ${status}; only pending or running runs can be cancelled.`,
    ),
  workflowRateLimited: (retryAfterSec: number) =>
    error(
      'WORKFLOW_RATE_LIMITED',
      `The workflow's start rate limit is reached; the next start is allowed in ${retryAfterSec} s.`,
      { 'retry-after': String(retryAfterSec) },
    ),
  stepNotWaiting: (stepId: string, status: string) =>
    error('WORKFLOW_STEP_NOT_WAITING', `Step '${stepId}' is ${status}, not waiting for an approval.`),
  approvalUsed: () => error('WORKFLOW_APPROVAL_USED'),
  approvalNotFound: () => error('WORKFLOW_APPROVAL_NOT_FOUND'),
  webhookNotFound: () => error('WORKFLOW_WEBHOOK_NOT_FOUND'),
  workflowRunNotRetryable: (status: string) =>
    error('WORKFLOW_RUN_NOT_RETRYABLE', `The run is ${status}; only failed runs can be retried.`),
} as const;
