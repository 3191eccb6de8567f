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

/** Credits as people read them: at most four decimals, no float noise (0.036, not 0.036000000000000004). */
export const fmtCredits = (n: number) =>
  Number(n.toFixed(4)).toLocaleString(undefined, { maximumFractionDigits: 4 });
