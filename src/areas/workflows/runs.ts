import { and, asc, count, desc, eq, inArray, type SQL } from 'drizzle-orm';

import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { projectForApiKey } from '../orgs/index.ts';
import { runVariableProblems } from './definition.ts';
import { workflowsErrors } from './errors.ts';
import { approvalUrl } from './public-links.ts';
import { advanceRun, notifyWorkers, runEnded, WAKE_CANCEL } from './scheduler.ts';
import type { RunBody, RunOut } from './schema.ts';
import { createRun } from './start.ts';
import { type RunStatus, workflowRuns, workflowStepStates } from './tables.ts';
import { workflowWaits } from './trigger-tables.ts';
import { findWorkflow, type WfScope } from './workflows.ts';

// Runs: created with every step as a pending row, then the scheduler promotes what can start. Reads
// assemble the contract's shape from the run row and its step rows.

type RunRow = typeof workflowRuns.$inferSelect;
type StepRow = typeof workflowStepStates.$inferSelect;

const tenant = (s: WfScope) =>
  and(eq(workflowRuns.orgId, s.orgId), eq(workflowRuns.environment, s.environment));

export async function startRun(deps: Deps, s: WfScope, workflowId: string, body: RunBody) {
  const wf = await findWorkflow(deps, s, workflowId);
  const project = await projectForApiKey(deps, s.orgId, body.projectSlug);
  if (project.id !== wf.projectId) throw workflowsErrors.workflowNotFound();
  const { values, problems } = runVariableProblems(wf.variables, body.variables);
  if (problems.length) throw workflowsErrors.workflowVariablesInvalid(problems);
  const started = await createRun(deps, wf, {
    projectId: project.id,
    variables: values,
    metadata: body.metadata,
    ...(body.webhook ? { webhook: body.webhook } : {}),
    trigger: { type: 'api' },
  });
  if (!started.ok)
    throw started.reason === 'rate_limited'
      ? workflowsErrors.workflowRateLimited(started.retryAfterSec)
      : workflowsErrors.workflowVariablesInvalid([started.message]);
  const run = started.id;
  const out = await getRun(deps, s, run);
  return {
    id: out.id,
    workflowId: out.workflowId,
    status: out.status,
    variables: out.variables,
    metadata: out.metadata,
    totalSteps: out.totalSteps,
    completedSteps: 0,
    createdAt: out.createdAt,
  };
}

export function toRunOut(r: RunRow, steps: StepRow[], waits: WaitOut[] = []): RunOut {
  const stepStates: RunOut['stepStates'] = {};
  for (const st of steps) {
    const w = waits.find((x) => x.runId === r.id && x.stepId === st.stepId);
    stepStates[st.stepId] = {
      status: st.status,
      startedAt: st.startedAt?.toISOString() ?? null,
      completedAt: st.completedAt?.toISOString() ?? null,
      attempts: st.attempts,
      lastError: st.lastError,
      creditsUsed: st.creditsUsed,
      crashRecoveries: st.crashes,
      completedItems: st.completedItems,
      totalItems: st.totalItems,
      ...(w ? { wait: { ...w.wait, approvalUrl: st.status === 'waiting' ? w.wait.approvalUrl : null } } : {}),
    };
  }
  const end = r.completedAt ?? (r.startedAt ? new Date() : null);
  return {
    id: r.id,
    workflowId: r.workflowId,
    status: r.status,
    variables: r.variables,
    metadata: r.metadata,
    output: r.output,
    stepStates,
    totalSteps: steps.length,
    completedSteps: steps.filter((x) => x.status === 'completed').length,
    totalDurationMs: r.startedAt && end ? Math.max(0, end.getTime() - r.startedAt.getTime()) : null,
    creditsUsed: r.creditsUsed,
    error: r.error,
    trigger: r.trigger,
    queued: r.held && r.status === 'pending',
    concurrencyKey: r.concurrencyKey,
    startedAt: r.startedAt?.toISOString() ?? null,
    completedAt: r.completedAt?.toISOString() ?? null,
    createdAt: r.createdAt.toISOString(),
  };
}

type WaitOut = { runId: string; stepId: string; wait: NonNullable<RunOut['stepStates'][string]['wait']> };

async function waitsOf(deps: Deps, runIds: string[]): Promise<WaitOut[]> {
  const rows = await deps.db.orm.select().from(workflowWaits).where(inArray(workflowWaits.runId, runIds));
  return rows.map((w) => ({
    runId: w.runId,
    stepId: w.stepId,
    wait: {
      kind: w.kind,
      dueAt: w.dueAt?.toISOString() ?? null,
      event: w.eventName,
      approvalUrl: w.kind === 'approval' && !w.decidedAt ? approvalUrl(deps, w.id) : null,
      decidedAt: w.decidedAt?.toISOString() ?? null,
    },
  }));
}

export async function findRun(deps: Deps, s: WfScope, id: string): Promise<RunRow> {
  if (!isUuid(id)) throw workflowsErrors.workflowRunNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(workflowRuns)
    .where(and(tenant(s), eq(workflowRuns.id, id)));
  if (!row) throw workflowsErrors.workflowRunNotFound();
  return row;
}

async function withSteps(deps: Deps, rows: RunRow[]): Promise<RunOut[]> {
  if (!rows.length) return [];
  const steps = await deps.db.orm
    .select()
    .from(workflowStepStates)
    .where(
      inArray(
        workflowStepStates.runId,
        rows.map((r) => r.id),
      ),
    )
    .orderBy(asc(workflowStepStates.position));
  const waits = await waitsOf(
    deps,
    rows.map((r) => r.id),
  );
  return rows.map((r) =>
    toRunOut(
      r,
      steps.filter((x) => x.runId === r.id),
      waits,
    ),
  );
}

export async function getRun(deps: Deps, s: WfScope, id: string): Promise<RunOut> {
  return (await withSteps(deps, [await findRun(deps, s, id)]))[0]!;
}

export async function listRuns(
  deps: Deps,
  s: WfScope,
  q: { projectSlug: string; workflowId?: string; status?: RunStatus; limit: number; offset: number },
) {
  const project = await projectForApiKey(deps, s.orgId, q.projectSlug);
  const where: SQL[] = [tenant(s)!, eq(workflowRuns.projectId, project.id)];
  if (q.workflowId) {
    if (!isUuid(q.workflowId)) return offsetPage([], 0, q);
    where.push(eq(workflowRuns.workflowId, q.workflowId));
  }
  if (q.status) where.push(eq(workflowRuns.status, q.status));
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select()
      .from(workflowRuns)
      .where(and(...where))
      .orderBy(desc(workflowRuns.createdAt), desc(workflowRuns.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm
      .select({ n: count() })
      .from(workflowRuns)
      .where(and(...where)),
  ]);
  return offsetPage(await withSteps(deps, rows), total?.n ?? 0, q);
}

/**
 * Cancel: the run and every unfinished step change in one transaction; a worker running one of them loses
 * its lease at once (its next heartbeat finds the row no longer its own) and aborts the step, and the
 * NOTIFY below makes that immediate.
 */
export async function cancelRun(deps: Deps, s: WfScope, id: string): Promise<RunOut> {
  const run = await findRun(deps, s, id);
  const done = await deps.db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `update workflow_runs set status = 'cancelled', completed_at = now()
        where id = $1 and status in ('pending', 'running') returning id`,
      [run.id],
    );
    if (!rows.length) return false;
    await tx.query(
      `update workflow_step_states set status = 'skipped', lease_until = null,
         completed_at = case when status = 'running' then now() else completed_at end,
         last_error = case when status = 'running' then 'Cancelled while running.' else last_error end
        where run_id = $1 and status in ('pending', 'ready', 'running', 'waiting')`,
      [run.id],
    );
    return true;
  });
  if (!done) throw workflowsErrors.workflowRunNotCancellable(run.status);
  await notifyWorkers(deps, `${WAKE_CANCEL}${run.id}`);
  await runEnded(deps, run.id);
  return getRun(deps, s, run.id);
}

/**
 * Retry from the failed step (beyond the contract: POST /workflows/runs/{id}/retry): completed steps keep
 * their stored outputs; failed and skipped ones start over as pending, and the run runs again.
 */
export async function retryRun(deps: Deps, s: WfScope, id: string): Promise<RunOut> {
  const run = await findRun(deps, s, id);
  const ok = await deps.db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `update workflow_runs set status = 'running', completed_at = null, error = null
        where id = $1 and status = 'failed' returning id`,
      [run.id],
    );
    if (!rows.length) return false;
    await tx.query(
      `update workflow_step_states set status = 'pending', attempts = 0, crashes = 0, last_error = null, output = null,
         started_at = null, completed_at = null, next_attempt_at = null, lease_until = null, worker_id = null
        where run_id = $1 and status <> 'completed'`,
      [run.id],
    );
    return true;
  });
  if (!ok) throw workflowsErrors.workflowRunNotRetryable(run.status);
  await advanceRun(deps, run.id);
  return getRun(deps, s, run.id);
}
