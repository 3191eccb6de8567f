import { defineArea } from '../manifest.ts';
import { getWorkflowRunForCli, runWorkflowForCli } from './cli-fn.ts';
import { getWorkflowRunViewForCli, listWorkflowsForCli } from './dashboard-fn.ts';
import { startEngine } from './engine.ts';
import { workflowsCatalogue } from './errors.ts';
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
  ],
  // The dashboard's chart series; getWorkflowUsageForCli stays a tool.
  notTools: ['getWorkflowUsageByDayForCli'],
  v1: [workflowsV1],
  migrations: [{ area: 'workflows', schema: ['src/areas/workflows/tables.ts'] }],
  start: async (deps, { worker }) => (worker ? startEngine(deps) : undefined),
});

export { workflowUsage } from './usage-fn.ts';
