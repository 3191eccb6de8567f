// Types and small helpers of the workflows pages.
import type { FnInput, FnOutput } from '../../../src/sdk/types.ts';

// The workflows functions' answers, typed from the server's own schemas (src/areas/workflows/dashboard-fn.ts,
// schema.ts) through the SDK, so the pages cannot drift from what the server sends.

export type Env = NonNullable<FnInput<'listWorkflowsForCli'>['environment']>;
export type WorkflowItem = FnOutput<'listWorkflowsForCli'>['items'][number];
export type RunSummary = WorkflowItem['recentRuns'][number];
export type RunView = FnOutput<'getWorkflowRunViewForCli'>;
export type StepState = RunView['run']['stepStates'][string];

export const runHref = (id: string, env: Env) => `/workflows/runs/${encodeURIComponent(id)}?env=${env}`;
