import type { Queryable } from '../../../core/db/client.ts';
import type { Deps } from '../../../deps.ts';
import type { StepDef } from '../definition.ts';
import { resolveValue } from '../steps/context.ts';
import { durationMs, waitKindOf } from './def.ts';

// A wait step the scheduler promotes does not become `ready`: it becomes `waiting`, with a workflow_waits
// row and, when it has a due time (a sleep's end, a timeout), a job of the Postgres queue due then — all in
// the scheduler's transaction. So a waiting run holds no worker and no timer, and survives restarts.

export const WAIT_DUE_JOB = 'workflows.wait.due';
/** An event wait just begun looks at the stored events: a job, so a crash after the commit loses nothing. */
export const WAIT_STORED_JOB = 'workflows.wait.stored';

export type WaitingRun = {
  id: string;
  orgId: string;
  environment: string;
  variables: Record<string, unknown>;
  outputs: Map<string, unknown>;
};

function sleepUntil(def: StepDef, run: WaitingRun, now: Date): { dueAt: Date; error: string | null } {
  const w = def.wait!;
  if (w.duration !== undefined)
    return { dueAt: new Date(now.getTime() + (durationMs(w.duration) ?? 0)), error: null };
  const data = {
    variables: run.variables,
    steps: Object.fromEntries([...run.outputs].map(([k, output]) => [k, { output }])),
  };
  const value = resolveValue(w.until ?? '', data);
  const at = typeof value === 'number' ? new Date(value) : new Date(String(value ?? ''));
  if (Number.isNaN(at.getTime()))
    return { dueAt: now, error: `wait.until gave '${String(value).slice(0, 100)}', which is not a time.` };
  // A time already past resumes at once.
  return { dueAt: at < now ? now : at, error: null };
}

/** Parks each wait step of `defs` as waiting. Inside the scheduler's transaction `tx`. */
export async function beginWaitsIn(
  tx: Queryable,
  deps: Deps,
  run: WaitingRun,
  defs: StepDef[],
): Promise<void> {
  const now = deps.clock.now();
  // A run whose first step waits has started, like one whose first step a worker claimed.
  await tx.query(
    `update workflow_runs set status = 'running', started_at = coalesce(started_at, $2)
      where id = $1 and status = 'pending'`,
    [run.id, now.toISOString()],
  );
  for (const def of defs) {
    const w = def.wait ?? {};
    const kind = waitKindOf(w);
    let dueAt: Date | null = null;
    let error: string | null = null;
    if (kind === 'sleep') ({ dueAt, error } = sleepUntil(def, run, now));
    else if (w.timeout !== undefined) dueAt = new Date(now.getTime() + (durationMs(w.timeout) ?? 0));
    await tx.query('delete from workflow_waits where run_id = $1 and step_id = $2', [run.id, def.id]);
    const { rows } = await tx.query<{ id: string }>(
      `insert into workflow_waits (run_id, step_id, org_id, environment, kind, event_name, match, due_at, error,
         created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning id`,
      [
        run.id,
        def.id,
        run.orgId,
        run.environment,
        kind,
        w.event ?? null,
        w.match ?? null,
        dueAt?.toISOString() ?? null,
        error,
        now.toISOString(),
      ],
    );
    await tx.query(
      `update workflow_step_states set status = 'waiting', attempts = attempts + 1,
         started_at = coalesce(started_at, $3), next_attempt_at = null
        where run_id = $1 and step_id = $2`,
      [run.id, def.id, now.toISOString()],
    );
    // Once committed, the wait looks at the events stored since its run began (waits/resolve.ts).
    if (kind === 'event')
      await deps.jobs.insert([{ name: WAIT_STORED_JOB, data: { waitId: rows[0]!.id } }], { tx });
    if (dueAt)
      await deps.jobs.insert([{ name: WAIT_DUE_JOB, data: { waitId: rows[0]!.id }, startAfter: dueAt }], {
        tx,
      });
  }
}
