// The shapes the workflows functions answer (src/areas/workflows/dashboard-fn.ts, schema.ts).

export type Env = 'production' | 'sandbox';
export type RunSummary = {
  id: string;
  status: string;
  creditsUsed: number;
  error: string | null;
  startedAt: string | null;
  completedAt: string | null;
  createdAt: string;
};
export type WorkflowItem = {
  id: string;
  projectSlug: string;
  slug: string;
  name: string;
  description: string | null;
  steps: { id: string }[];
  recentRuns: RunSummary[];
};
export type StepState = {
  status: string;
  startedAt: string | null;
  completedAt: string | null;
  attempts: number;
  lastError: string | null;
  creditsUsed: number;
};
export type RunView = {
  run: RunSummary & {
    workflowId: string;
    output: Record<string, unknown>;
    stepStates: Record<string, StepState>;
    totalSteps: number;
    completedSteps: number;
    totalDurationMs: number | null;
  };
  workflow: { id: string; name: string; slug: string } | null;
  steps: { id: string; type: string; dependsOn: string[] }[];
};

export const runHref = (id: string, env: Env) => `/workflows/runs/${encodeURIComponent(id)}?env=${env}`;
