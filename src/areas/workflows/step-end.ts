import type { Queryable } from '../../core/db/client.ts';
import type { Deps } from '../../deps.ts';
import type { StepDef } from './definition.ts';
import { failureOutput } from './retry-policy.ts';
import { advanceIn, type Effects, failRunIn } from './scheduler.ts';

// How a step ends, whoever ran it: a worker (engine.ts) or the resolution of a wait (waits/resolve.ts).
// One path for both, so a step failing for good means the same thing everywhere: `continueOnError`
// completes it with `{ error }` and the run goes on, anything else fails the run (and sends its webhook).

/** Who may end the step: the worker holding its lease, or nobody holding a `waiting` step. */
export type Owner = { status: 'running'; workerId: string } | { status: 'waiting' };

function guard(o: Owner, first: number): { sql: string; params: unknown[] } {
  return o.status === 'running'
    ? { sql: `status = 'running' and worker_id = $${first}`, params: [o.workerId] }
    : { sql: `status = 'waiting'`, params: [] };
}

/** Closes the step's attempt in progress, if a worker opened one (engine.ts, workflow_step_attempts). */
export async function endAttemptIn(
  tx: Queryable,
  runId: string,
  stepId: string,
  outcome: 'completed' | 'failed' | 'retrying',
  error: string | null,
): Promise<void> {
  await tx.query(
    `update workflow_step_attempts set outcome = $3, error = $4, ended_at = now()
      where run_id = $1 and step_id = $2 and outcome = 'running'`,
    [runId, stepId, outcome, error],
  );
}

/** Stores the output and advances the run. Null when the step is no longer the owner's. Inside `tx`. */
export async function completeStepIn(
  tx: Queryable,
  deps: Deps,
  s: { runId: string; stepId: string; owner: Owner; at?: Date | undefined },
  json: string,
  credits: number,
  lastError: string | null,
): Promise<Effects | null> {
  const g = guard(s.owner, 7);
  const { rows: mine } = await tx.query(
    `update workflow_step_states set status = 'completed', output = $3, credits_used = $4,
       completed_at = coalesce($5::timestamptz, now()), lease_until = null, last_error = $6
      where run_id = $1 and step_id = $2 and ${g.sql} returning step_id`,
    [s.runId, s.stepId, json, credits, s.at?.toISOString() ?? null, lastError, ...g.params],
  );
  if (!mine.length) return null;
  await endAttemptIn(tx, s.runId, s.stepId, lastError ? 'failed' : 'completed', lastError);
  if (credits)
    await tx.query('update workflow_runs set credits_used = credits_used + $2 where id = $1', [
      s.runId,
      credits,
    ]);
  return advanceIn(tx, deps, s.runId);
}

/**
 * A step failed for good (its retries spent, or a failure retrying cannot fix). With `continueOnError` it
 * completes with `{ error }`; otherwise it is failed and so is its run. Null when the step is no longer the
 * owner's. Inside `tx`.
 */
export async function failStepIn(
  tx: Queryable,
  deps: Deps,
  s: { runId: string; stepId: string; owner: Owner; def: StepDef | undefined; at?: Date | undefined },
  err: unknown,
  attempts: number,
): Promise<Effects | null> {
  const message = String((err as Error)?.message ?? err).slice(0, 1000);
  if (s.def?.continueOnError)
    return completeStepIn(tx, deps, s, JSON.stringify(failureOutput(err, attempts)), 0, message);
  const g = guard(s.owner, 5);
  const { rows: mine } = await tx.query(
    `update workflow_step_states set status = 'failed', last_error = $3,
       completed_at = coalesce($4::timestamptz, now()), lease_until = null
      where run_id = $1 and step_id = $2 and ${g.sql} returning step_id`,
    [s.runId, s.stepId, message, s.at?.toISOString() ?? null, ...g.params],
  );
  if (!mine.length) return null;
  await endAttemptIn(tx, s.runId, s.stepId, 'failed', message);
  return failRunIn(tx, s.runId, s.stepId, message);
}
