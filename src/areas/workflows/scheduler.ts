import type { Queryable } from '../../core/db/client.ts';
import { queueWebhook } from '../../core/webhooks.ts';
import type { Deps } from '../../deps.ts';
import { unholdIn } from './admission.ts';
import type { StepDef } from './definition.ts';
import type { RunStatus, StepStatus } from './tables.ts';
import { beginWaitsIn } from './waits/begin.ts';

// The scheduler decides, under a lock on the run row, which pending steps may start: a step whose
// dependencies are all finished becomes ready (up to the run's parallel cap), or skipped when it lies on a
// condition's branch not taken or when every one of its dependencies was skipped. A run whose steps are all
// finished completes. Workers wake on a NOTIFY; a wake-up lost only delays a step until their next poll.

export const WAKE_CHANNEL = 'pier_workflows';
export const WAKE_READY = 'ready';
/** `cancel:<runId>`: workers abort that run's running steps at once. */
export const WAKE_CANCEL = 'cancel:';

export async function notifyWorkers(deps: Deps, payload: string, tx?: Queryable): Promise<void> {
  await (tx ?? deps.db).query('select pg_notify($1, $2)', [WAKE_CHANNEL, payload]);
}

export type Effects = { promoted: number; finished: RunStatus | null; runId: string };
const TERMINAL: StepStatus[] = ['completed', 'skipped', 'failed'];

/** Promotes/skips the run's pending steps; completes the run when nothing is left. Inside `tx`. */
export async function advanceIn(tx: Queryable, deps: Deps, runId: string): Promise<Effects> {
  const none: Effects = { promoted: 0, finished: null, runId };
  const { rows: runs } = await tx.query<{
    status: RunStatus;
    steps: StepDef[];
    held: boolean;
    variables: Record<string, unknown>;
    org_id: string;
    environment: string;
  }>(
    'select status, steps, held, variables, org_id, environment from workflow_runs where id = $1 for update',
    [runId],
  );
  const run = runs[0];
  // A held run waits for its concurrency key or its schedule's previous run (admission.ts).
  if (!run || run.held || (run.status !== 'pending' && run.status !== 'running')) return none;
  const { rows } = await tx.query<{ step_id: string; status: StepStatus; output: unknown }>(
    'select step_id, status, output from workflow_step_states where run_id = $1',
    [runId],
  );
  const state = new Map(rows.map((r) => [r.step_id, r.status]));
  const output = new Map(rows.map((r) => [r.step_id, r.output]));
  const defs = new Map(run.steps.map((s) => [s.id, s]));
  const skipped: string[] = [];
  const candidates: string[] = [];
  for (let changed = true; changed; ) {
    changed = false;
    for (const s of run.steps) {
      if (state.get(s.id) !== 'pending' || candidates.includes(s.id)) continue;
      const deps_ = s.dependsOn ?? [];
      if (!deps_.every((d) => TERMINAL.includes(state.get(d) ?? 'completed'))) continue;
      const offBranch = deps_.some((d) => {
        const c = defs.get(d);
        if (c?.type !== 'condition' || state.get(d) !== 'completed') return false;
        const notTaken = output.get(d) ? c.whenFalse : c.whenTrue;
        return (notTaken ?? []).includes(s.id);
      });
      if (offBranch || (deps_.length > 0 && deps_.every((d) => state.get(d) === 'skipped'))) {
        state.set(s.id, 'skipped');
        skipped.push(s.id);
        changed = true;
      } else candidates.push(s.id);
    }
  }
  const active = [...state.values()].filter((v) => v === 'ready' || v === 'running').length;
  const promote = candidates.slice(0, Math.max(0, deps.config.workflows.runParallelism - active));
  if (skipped.length)
    await tx.query(
      `update workflow_step_states set status = 'skipped', completed_at = now()
        where run_id = $1 and step_id = any($2::text[]) and status = 'pending'`,
      [runId, skipped],
    );
  // A wait step is parked (waits/begin.ts), not handed to a worker.
  const waits = promote.filter((id) => defs.get(id)?.type === 'wait');
  const ready = promote.filter((id) => !waits.includes(id));
  if (ready.length)
    await tx.query(
      `update workflow_step_states set status = 'ready', next_attempt_at = null
        where run_id = $1 and step_id = any($2::text[]) and status = 'pending'`,
      [runId, ready],
    );
  if (waits.length)
    await beginWaitsIn(
      tx,
      deps,
      {
        id: runId,
        orgId: run.org_id,
        environment: run.environment,
        variables: run.variables,
        outputs: output,
      },
      waits.map((id) => defs.get(id)!),
    );
  for (const id of ready) state.set(id, 'ready');
  for (const id of waits) state.set(id, 'waiting');
  if (![...state.values()].every((v) => v === 'completed' || v === 'skipped'))
    return { promoted: promote.length, finished: null, runId };
  const out: Record<string, unknown> = {};
  for (const s of run.steps)
    if (state.get(s.id) === 'completed') out[s.outputVariable ?? s.id] = output.get(s.id) ?? null;
  await tx.query(
    `update workflow_runs set status = 'completed', output = $2, completed_at = now(),
       started_at = coalesce(started_at, now()),
       credits_used = (select coalesce(sum(credits_used), 0) from workflow_step_states where run_id = $1)
      where id = $1`,
    [runId, JSON.stringify(out)],
  );
  return { promoted: promote.length, finished: 'completed', runId };
}

/** What follows a scheduling decision once committed: wake-ups and the run's webhook. */
export async function applyEffects(deps: Deps, e: Effects): Promise<void> {
  if (e.promoted) await notifyWorkers(deps, WAKE_READY);
  if (e.finished === 'failed') await notifyWorkers(deps, `${WAKE_CANCEL}${e.runId}`);
  if (e.finished) await sendRunWebhook(deps, e.runId);
  if (e.finished) await runEnded(deps, e.runId);
}

/** A run ended (completed, failed, cancelled): the runs of its workflow held behind it may start. */
export async function runEnded(deps: Deps, runId: string): Promise<void> {
  const { rows } = await deps.db.query<{ workflow_id: string }>(
    'select workflow_id from workflow_runs where id = $1',
    [runId],
  );
  if (rows[0]) await releaseHeld(deps, rows[0].workflow_id);
}

/** Starts the held runs of a workflow that now may (also swept every minute, for a process that died). */
export async function releaseHeld(deps: Deps, workflowId: string): Promise<void> {
  const effects = await deps.db.transaction(async (tx) => {
    const out: Effects[] = [];
    for (const id of await unholdIn(tx, workflowId)) out.push(await advanceIn(tx, deps, id));
    return out;
  });
  for (const e of effects) await applyEffects(deps, e);
}

export async function advanceRun(deps: Deps, runId: string): Promise<void> {
  await applyEffects(deps, await deps.db.transaction((tx) => advanceIn(tx, deps, runId)));
}

/** A step failed for good: the run fails, and its other unfinished steps are skipped. Inside `tx`. */
export async function failRunIn(
  tx: Queryable,
  runId: string,
  stepId: string,
  message: string,
): Promise<Effects> {
  const { rows } = await tx.query(
    `update workflow_runs set status = 'failed', error = $2, completed_at = now(),
       started_at = coalesce(started_at, now()),
       credits_used = (select coalesce(sum(credits_used), 0) from workflow_step_states where run_id = $1)
      where id = $1 and status in ('pending', 'running') returning id`,
    [runId, `Step '${stepId}' failed: ${message}`],
  );
  if (!rows.length) return { promoted: 0, finished: null, runId };
  await tx.query(
    `update workflow_step_states set status = 'skipped', lease_until = null
      where run_id = $1 and status in ('pending', 'ready', 'running', 'waiting')`,
    [runId],
  );
  return { promoted: 0, finished: 'failed', runId };
}

/** The completion or failure webhook (Standard Webhooks, retried, through the SSRF guard). */
async function sendRunWebhook(deps: Deps, runId: string): Promise<void> {
  const { rows } = await deps.db.query<{
    org_id: string;
    environment: string;
    workflow_id: string;
    status: RunStatus;
    output: unknown;
    error: string | null;
    credits_used: number;
    webhook_url: string | null;
    webhook_secret_enc: string | null;
    completed_at: Date | string | null;
  }>('select * from workflow_runs where id = $1', [runId]);
  const r = rows[0];
  if (!r?.webhook_url || !r.webhook_secret_enc) return;
  await queueWebhook(deps, {
    orgId: r.org_id,
    environment: r.environment,
    url: r.webhook_url,
    secret: deps.keyring.decrypt(r.webhook_secret_enc),
    type: r.status === 'completed' ? 'workflow.run.completed' : 'workflow.run.failed',
    data: {
      id: runId,
      workflowId: r.workflow_id,
      status: r.status,
      output: r.output,
      error: r.error,
      creditsUsed: Number(r.credits_used),
      completedAt: r.completed_at ? new Date(r.completed_at).toISOString() : null,
    },
  });
}
