import jsonata from 'jsonata';
import type { Queryable } from '../../../core/db/client.ts';
import type { Deps } from '../../../deps.ts';
import type { StepDef } from '../definition.ts';
import { applyEffects } from '../scheduler.ts';
import { completeStepIn, failStepIn } from '../step-end.ts';
import { StepError } from '../steps/context.ts';
import type { StepStatus } from '../tables.ts';
import { durationMs } from './def.ts';

// How a waiting step ends: its due job runs (a sleep ends, a timeout passes), a matching event arrives, or
// a person decides an approval. Each happens in one transaction that locks the wait row and finds the step
// still `waiting` (else nothing changes: a run cancelled meanwhile, a second click on an approval link),
// writes the step's output or failure, and lets the scheduler go on, as a worker finishing a step does.

export type EventIn = { id: string; name: string; payload: unknown; receivedAt: string };
export type Decision = { approved: boolean; by: 'link' | 'api'; comment?: string | undefined };
type How = { kind: 'due' } | { kind: 'event'; event: EventIn } | { kind: 'approval'; decision: Decision };

export type WaitRow = {
  id: string;
  run_id: string;
  step_id: string;
  kind: 'sleep' | 'event' | 'approval';
  error: string | null;
  decided_at: Date | null;
  step_status: StepStatus;
  attempts: number;
  steps: StepDef[];
};

export type Resolution = 'resolved' | 'not_waiting' | 'already_decided';

async function lockWait(tx: Queryable, waitId: string): Promise<WaitRow | null> {
  const { rows } = await tx.query<WaitRow>(
    `select w.id, w.run_id, w.step_id, w.kind, w.error, w.decided_at, s.status as step_status, s.attempts, r.steps
       from workflow_waits w
       join workflow_step_states s on s.run_id = w.run_id and s.step_id = w.step_id
       join workflow_runs r on r.id = w.run_id
      where w.id = $1 for update of w`,
    [waitId],
  );
  return rows[0] ?? null;
}

function outcome(w: WaitRow, how: How, now: Date): { output: unknown } | { error: string } {
  const def = w.steps.find((s) => s.id === w.step_id)?.wait ?? {};
  if (how.kind === 'event') return { output: { event: how.event } };
  if (how.kind === 'approval') {
    const d = how.decision;
    if (!d.approved)
      return {
        error: `Rejected (by ${d.by === 'link' ? 'the approval link' : 'an API call'})${d.comment ? `: ${d.comment}` : '.'}`,
      };
    return { output: { approved: true, by: d.by, comment: d.comment ?? null, decidedAt: now.toISOString() } };
  }
  if (w.error) return { error: w.error };
  if (w.kind === 'sleep') return { output: { resumedAt: now.toISOString() } };
  if (def.onTimeout === 'continue') return { output: { timedOut: true } };
  const span = def.timeout === undefined ? '' : ` ${(durationMs(def.timeout) ?? 0) / 1000} s`;
  const what = w.kind === 'event' ? `event '${def.event}'` : 'an approval';
  return { error: `Timed out after${span} waiting for ${what}.` };
}

export async function resolveWait(deps: Deps, waitId: string, how: How): Promise<Resolution> {
  const now = deps.clock.now();
  const result = await deps.db.transaction(async (tx) => {
    const w = await lockWait(tx, waitId);
    if (how.kind === 'approval' && w?.decided_at) return { r: 'already_decided' as const, effects: null };
    if (w?.step_status !== 'waiting' || (how.kind === 'approval' && w.kind !== 'approval'))
      return { r: 'not_waiting' as const, effects: null };
    if (how.kind === 'approval')
      await tx.query('update workflow_waits set decided_at = $2 where id = $1', [w.id, now.toISOString()]);
    const o = outcome(w, how, now);
    // The step ends as a worker's would (step-end.ts): a rejection or a timeout is a failure for good,
    // so `continueOnError` completes it with `{ error }` and anything else fails the run.
    const s = {
      runId: w.run_id,
      stepId: w.step_id,
      owner: { status: 'waiting' as const },
      def: w.steps.find((x) => x.id === w.step_id),
      at: now,
    };
    const effects =
      'error' in o
        ? await failStepIn(tx, deps, s, new StepError(o.error), w.attempts)
        : await completeStepIn(tx, deps, s, JSON.stringify(o.output), 0, null);
    return { r: 'resolved' as const, effects };
  });
  if (result.effects) await applyEffects(deps, result.effects);
  return result.r;
}

/** Whether a wait's `match` is truthy for the event, over `{ event, variables, steps }`. */
async function matches(
  deps: Deps,
  w: { run_id: string; match: string | null; variables: Record<string, unknown> },
  event: EventIn,
): Promise<boolean> {
  if (!w.match) return true;
  const { rows: done } = await deps.db.query<{ step_id: string; output: unknown }>(
    `select step_id, output from workflow_step_states where run_id = $1 and status = 'completed'`,
    [w.run_id],
  );
  const data = {
    event: { name: event.name, payload: event.payload },
    variables: w.variables,
    steps: Object.fromEntries(done.map((d) => [d.step_id, { output: d.output }])),
  };
  try {
    return Boolean(await jsonata(w.match).evaluate(data));
  } catch {
    return false; // an expression that fails on this event does not match it
  }
}

/** A run's completed step already took this event (a redelivery must not resume a later wait with it). */
const notTaken = (runId: string, eventId: string) => `not exists (select 1 from workflow_step_states c
   where c.run_id = ${runId} and c.status = 'completed' and c.output->'event'->>'id' = ${eventId})`;

/**
 * An event resumes every step of the organization's environment waiting for its name whose `match` is
 * truthy for it. It counts for runs created at or before it (a wait that begins later finds it stored:
 * resumeFromStoredEvents). Returns how many it resumed.
 */
export async function deliverToWaits(
  deps: Deps,
  scope: { orgId: string; environment: string },
  event: EventIn,
): Promise<number> {
  const { rows } = await deps.db.query<{
    id: string;
    run_id: string;
    match: string | null;
    variables: Record<string, unknown>;
  }>(
    `select w.id, w.run_id, w.match, r.variables
       from workflow_waits w
       join workflow_step_states s on s.run_id = w.run_id and s.step_id = w.step_id
       join workflow_runs r on r.id = w.run_id
      where w.org_id = $1 and w.environment = $2 and w.kind = 'event' and w.event_name = $3
        and s.status = 'waiting' and r.created_at <= $4 and ${notTaken('w.run_id', '$5')}
        and (r.trigger->>'eventId') is distinct from $5
      order by w.created_at`,
    [scope.orgId, scope.environment, event.name, event.receivedAt, event.id],
  );
  let resumed = 0;
  for (const w of rows) {
    if (!(await matches(deps, w, event))) continue;
    if ((await resolveWait(deps, w.id, { kind: 'event', event })) === 'resolved') resumed++;
  }
  return resumed;
}

/**
 * A wait for an event that has just begun looks at the stored events its run may take: of its name,
 * received since the run was created (and still kept), not taken by another step of the run nor the event
 * that started the run, oldest first.
 * The first that matches resumes it. Events arriving meanwhile find the wait themselves (deliverToWaits).
 */
export async function resumeFromStoredEvents(deps: Deps, waitId: string): Promise<boolean> {
  const { rows } = await deps.db.query<{
    id: string;
    run_id: string;
    org_id: string;
    environment: string;
    event_name: string;
    match: string | null;
    variables: Record<string, unknown>;
    created_at: Date | string;
    started_by: string | null;
  }>(
    `select w.id, w.run_id, w.org_id, w.environment, w.event_name, w.match, r.variables, r.created_at,
            r.trigger->>'eventId' as started_by
       from workflow_waits w
       join workflow_step_states s on s.run_id = w.run_id and s.step_id = w.step_id
       join workflow_runs r on r.id = w.run_id
      where w.id = $1 and w.kind = 'event' and s.status = 'waiting'`,
    [waitId],
  );
  const w = rows[0];
  let resumed = false;
  if (w) {
    const { rows: events } = await deps.db.query<{
      id: string;
      name: string;
      payload: unknown;
      received_at: Date | string;
    }>(
      `select e.id, e.name, e.payload, e.received_at from workflow_events e
        where e.org_id = $1 and e.environment = $2 and e.name = $3 and e.received_at >= $4
          and ${notTaken('$5::uuid', 'e.id::text')} and e.id::text is distinct from $6
        order by e.received_at limit 200`,
      [w.org_id, w.environment, w.event_name, new Date(w.created_at).toISOString(), w.run_id, w.started_by],
    );
    for (const e of events) {
      const event = {
        id: e.id,
        name: e.name,
        payload: e.payload,
        receivedAt: new Date(e.received_at).toISOString(),
      };
      if (!(await matches(deps, w, event))) continue;
      resumed = (await resolveWait(deps, w.id, { kind: 'event', event })) === 'resolved';
      break;
    }
  }
  return resumed;
}
