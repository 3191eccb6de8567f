import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import { getWorkflowRunForCli, runWorkflowForCli } from './cli-fn.ts';
import {
  getWorkflowRunViewForCli,
  getWorkflowStepOutputForCli,
  listWorkflowsForCli,
} from './dashboard-fn.ts';
import { startEngine } from './engine.ts';
import { workflowsCatalogue } from './errors.ts';
import { workflowsPublicRoutes } from './http.ts';
import { triggersTickJob, waitDueJob, waitStoredJob } from './jobs.ts';
import { TRIGGERS_TICK_CRON, TRIGGERS_TICK_JOB } from './triggers/tick.ts';
import { getWorkflowUsageByDayForCli, getWorkflowUsageForCli } from './usage-fn.ts';
import { workflowsV1 } from './v1.ts';

// Workflows: DAG definitions of AI, code and http steps per project, and durable runs (a row per step,
// claimed with a lease by the worker role's engine; docs/workflows.md).

export const workflowsArea = defineArea({
  name: 'workflows',
  errors: [workflowsCatalogue],
  fns: [
    getWorkflowUsageForCli,
    getWorkflowUsageByDayForCli,
    runWorkflowForCli,
    getWorkflowRunForCli,
    listWorkflowsForCli,
    getWorkflowRunViewForCli,
    getWorkflowStepOutputForCli,
  ],
  // The dashboard's chart series; getWorkflowUsageForCli stays a tool.
  notTools: ['getWorkflowUsageByDayForCli', 'getWorkflowStepOutputForCli'],
  v1: [workflowsV1],
  // The inbound webhook and the approval links: signed URLs, no API key (public-links.ts).
  http: workflowsPublicRoutes,
  jobs: [waitDueJob, waitStoredJob, triggersTickJob],
  schedules: [{ job: TRIGGERS_TICK_JOB, cron: TRIGGERS_TICK_CRON }],
  migrations: [
    {
      area: 'workflows',
      schema: ['src/areas/workflows/tables.ts', 'src/areas/workflows/trigger-tables.ts'],
    },
  ],
  start: async (deps, { worker }) => (worker ? startEngine(deps) : undefined),
});

export { workflowUsage } from './usage-fn.ts';

declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'workflows.wait.due': PayloadOf<typeof waitDueJob>;
    'workflows.wait.stored': PayloadOf<typeof waitStoredJob>;
    'workflows.triggers.tick': PayloadOf<typeof triggersTickJob>;
  }
}
