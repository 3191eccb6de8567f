import { and, desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import { findRun, getRun } from './runs.ts';
import { runOut, triggersOut, workflowOut } from './schema.ts';
import { RUN_STATUSES, workflowRuns, workflows } from './tables.ts';
import { triggersView } from './triggers/history.ts';
import { toWorkflowOuts } from './workflows.ts';

// The dashboard's workflows page (docs/workflows.md, "Dashboard"): read-only views for any member of the
// organization, with a personal session or token — never an API key. Scoped by organization and
// environment, so another organization's run answers 404 like a missing one.

const environment = z.enum(['production', 'sandbox']).default('production');
const LIST_MAX = 100;
const RECENT_RUNS = 200;

async function scopeOf(deps: Deps, userId: string, orgSlug: string, env: 'production' | 'sandbox') {
  const { org } = await orgForUser(deps, userId, orgSlug);
  return { orgId: org.id, environment: env };
}

const runSummary = z.object({
  id: z.string(),
  status: z.enum(RUN_STATUSES),
  creditsUsed: z.number(),
  error: z.string().nullable(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  createdAt: z.string(),
});
const iso = (d: Date | null) => d?.toISOString() ?? null;
/** Characters of a step's output (as JSON) the run page shows; the rest is a download. */
export const OUTPUT_PREVIEW_CHARS = 4000;

const attemptOut = z.object({
  /** The retry attempt served: a claim after a crash serves the same attempt again (`interrupted` before). */
  attempt: z.number().int(),
  outcome: z.enum(['running', 'completed', 'failed', 'retrying', 'interrupted']),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  error: z.string().nullable(),
});

type AttemptRow = {
  step_id: string;
  attempt: number;
  outcome: z.infer<typeof attemptOut>['outcome'];
  error: string | null;
  started_at: Date;
  ended_at: Date | null;
  input: unknown;
};

/** The input's JSON as the page shows it: its first characters; a stored preview (over the cap) is cut too. */
function inputView(input: unknown): { inputPreview: string | null; inputTruncated: boolean } {
  if (input === undefined) return { inputPreview: null, inputTruncated: false };
  const capped = input as { truncated?: boolean; preview?: string } | null;
  const text =
    capped?.truncated && typeof capped.preview === 'string' ? capped.preview : JSON.stringify(input);
  return {
    inputPreview: text.slice(0, OUTPUT_PREVIEW_CHARS),
    inputTruncated: Boolean(capped?.truncated) || text.length > OUTPUT_PREVIEW_CHARS,
  };
}

export const listWorkflowsForCli = defineFn({
  name: 'listWorkflowsForCli',
  summary:
    "Lists an environment's workflows across projects, newest first, with their recent runs (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, environment }),
  output: z.object({
    items: z.array(workflowOut.extend({ recentRuns: z.array(runSummary), triggerHistory: triggersOut })),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const s = await scopeOf(deps, caller.userId, input.orgSlug, input.environment);
    const [rows, runs] = await Promise.all([
      deps.db.orm
        .select()
        .from(workflows)
        .where(and(eq(workflows.orgId, s.orgId), eq(workflows.environment, s.environment)))
        .orderBy(desc(workflows.createdAt), desc(workflows.id))
        .limit(LIST_MAX),
      deps.db.orm
        .select()
        .from(workflowRuns)
        .where(and(eq(workflowRuns.orgId, s.orgId), eq(workflowRuns.environment, s.environment)))
        .orderBy(desc(workflowRuns.createdAt), desc(workflowRuns.id))
        .limit(RECENT_RUNS),
    ]);
    const outs = await toWorkflowOuts(deps, rows);
    const history = await Promise.all(rows.map((r) => triggersView(deps, r)));
    return {
      items: outs.map((w, i) => ({
        ...w,
        triggerHistory: history[i]!,
        recentRuns: runs
          .filter((r) => r.workflowId === w.id)
          .slice(0, 5)
          .map((r) => ({
            id: r.id,
            status: r.status,
            creditsUsed: r.creditsUsed,
            error: r.error,
            startedAt: iso(r.startedAt),
            completedAt: iso(r.completedAt),
            createdAt: r.createdAt.toISOString(),
          })),
      })),
    };
  },
});

export const getWorkflowRunViewForCli = defineFn({
  name: 'getWorkflowRunViewForCli',
  summary: "A run with its step states and the steps' graph as the run started it (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, environment, runId: z.string().max(100) }),
  output: z.object({
    run: runOut,
    workflow: z.object({ id: z.string(), name: z.string(), slug: z.string() }).nullable(),
    steps: z.array(z.object({ id: z.string(), type: z.string(), dependsOn: z.array(z.string()) })),
    /** Per step: its definition as the run started it, and its output's first characters (JSON). */
    stepDetails: z.array(
      z.object({
        id: z.string(),
        definition: z.record(z.string(), z.unknown()),
        outputPreview: z.string().nullable(),
        outputBytes: z.number().int(),
        outputTruncated: z.boolean(),
        /** What the latest attempt was given, templates filled (steps/input.ts), as JSON; null before any. */
        inputPreview: z.string().nullable(),
        inputTruncated: z.boolean(),
        /** Every claim of the step by a worker, oldest first, each with its own error. */
        attempts: z.array(attemptOut),
      }),
    ),
  }),
  errors: ['ORG_NOT_FOUND', 'WORKFLOW_RUN_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const s = await scopeOf(deps, caller.userId, input.orgSlug, input.environment);
    const row = await findRun(deps, s, input.runId);
    const [run, [wf]] = await Promise.all([
      getRun(deps, s, row.id),
      deps.db.orm
        .select({ id: workflows.id, name: workflows.name, slug: workflows.slug })
        .from(workflows)
        .where(eq(workflows.id, row.workflowId)),
    ]);
    // The run's own snapshot of the definition: editing the workflow afterwards never redraws a run.
    const steps = row.steps.map((st) => ({ id: st.id, type: st.type, dependsOn: st.dependsOn ?? [] }));
    const { rows: outs } = await deps.db.query<{
      step_id: string;
      preview: string | null;
      chars: number | null;
    }>(
      `select step_id, left(output::text, $2) as preview, length(output::text) as chars
         from workflow_step_states where run_id = $1`,
      [row.id, OUTPUT_PREVIEW_CHARS],
    );
    // Only the latest attempt's input is read: each is up to 16,000 characters.
    const { rows: tries } = await deps.db.query<AttemptRow>(
      `select step_id, attempt, outcome, error, started_at, ended_at,
              case when n = max(n) over (partition by step_id) then input end as input
         from workflow_step_attempts where run_id = $1 order by step_id, n`,
      [row.id],
    );
    const stepDetails = row.steps.map((st) => {
      const o = outs.find((x) => x.step_id === st.id);
      const chars = Number(o?.chars ?? 0);
      const mine = tries.filter((a) => a.step_id === st.id);
      const stillRunning = run.stepStates[st.id]?.status === 'running';
      return {
        id: st.id,
        definition: st as Record<string, unknown>,
        outputPreview: o?.preview ?? null,
        outputBytes: chars,
        outputTruncated: chars > OUTPUT_PREVIEW_CHARS,
        ...inputView(mine.length ? mine[mine.length - 1]!.input : undefined),
        attempts: mine.map((a) => {
          const start = new Date(a.started_at);
          const end = a.ended_at ? new Date(a.ended_at) : null;
          // An attempt still open on a step that is not running was cut off (a cancel, a failure elsewhere).
          const outcome = a.outcome === 'running' && !stillRunning ? 'interrupted' : a.outcome;
          return {
            attempt: a.attempt,
            outcome,
            startedAt: start.toISOString(),
            endedAt: end?.toISOString() ?? null,
            durationMs: end ? end.getTime() - start.getTime() : null,
            error: a.error,
          };
        }),
      };
    });
    return { run, workflow: wf ?? null, steps, stepDetails };
  },
});

export const getWorkflowStepOutputForCli = defineFn({
  name: 'getWorkflowStepOutputForCli',
  summary: "One step's whole output, for the run page's download (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    orgSlug: slugInput,
    environment,
    runId: z.string().max(100),
    stepId: z.string().max(64),
  }),
  output: z.object({ output: z.unknown() }),
  errors: ['ORG_NOT_FOUND', 'WORKFLOW_RUN_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const s = await scopeOf(deps, caller.userId, input.orgSlug, input.environment);
    const row = await findRun(deps, s, input.runId);
    const { rows } = await deps.db.query<{ output: unknown }>(
      'select output from workflow_step_states where run_id = $1 and step_id = $2',
      [row.id, input.stepId],
    );
    return { output: rows[0]?.output ?? null };
  },
});
