import jsonata from 'jsonata';
import type { Queryable } from '../../../core/db/client.ts';
import type { Deps } from '../../../deps.ts';
import { runVariableProblems } from '../definition.ts';
import { afterStart, createRunIn, type Started } from '../start.ts';
import type { workflows } from '../tables.ts';
import type { FireOutcome } from '../trigger-tables.ts';
import type { RunTrigger } from './config.ts';

// A trigger firing (a schedule's slot, an event, a webhook call): the run's variables are made from what
// came in, the run is created like any other (rate limit, concurrency key), and the fire is recorded with
// its outcome, so a trigger's history says what it did even when it started nothing. The run and its fire
// row are written in one transaction, which may also hold what claimed the fire (a schedule's slot), so a
// crash leaves either both or neither: a trigger fires exactly once.

type WorkflowRow = typeof workflows.$inferSelect;

export type Fire = {
  trigger: 'schedule' | 'event' | 'webhook';
  ref: string;
  slot?: Date;
  given: unknown;
  run: RunTrigger;
  serialKey?: string | null;
  metadata?: Record<string, unknown>;
  /** The stored event delivered (one fire per event and workflow). */
  eventId?: string;
};

export type Fired = { workflowId: string; outcome: FireOutcome; runId: string | null; detail: string | null };

export async function recordFire(
  tx: Queryable,
  deps: Deps,
  wf: WorkflowRow,
  f: Pick<Fire, 'trigger' | 'ref' | 'slot' | 'eventId'>,
  outcome: FireOutcome,
  runId: string | null,
  detail: string | null,
): Promise<Fired> {
  await tx.query(
    `insert into workflow_trigger_fires (org_id, environment, workflow_id, trigger, ref, slot, outcome, run_id,
       detail, fired_at, event_id) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      wf.orgId,
      wf.environment,
      wf.id,
      f.trigger,
      f.ref,
      f.slot?.toISOString() ?? null,
      outcome,
      runId,
      detail,
      deps.clock.now().toISOString(),
      f.eventId ?? null,
    ],
  );
  return { workflowId: wf.id, outcome, runId, detail };
}

/** The variables a trigger gives: an `input` expression's object, else the payload's declared keys. */
export async function inputOf(expr: string | undefined, data: Record<string, unknown>, payload: unknown) {
  const v = expr ? await jsonata(expr).evaluate(data) : payload;
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v))
    throw new Error(
      `the ${expr ? 'input expression' : 'payload'} gave ${Array.isArray(v) ? 'an array' : typeof v}, not an object`,
    );
  return v as Record<string, unknown>;
}

/** Fires in the caller's transaction; call afterStart with `started` once it committed. */
export async function fireIn(
  tx: Queryable,
  deps: Deps,
  wf: WorkflowRow,
  f: Fire,
): Promise<{ fired: Fired; started: Started | null }> {
  const given = (f.given ?? {}) as Record<string, unknown>;
  // What the workflow does not declare is left out rather than refused: one event feeds many workflows.
  const known = Object.fromEntries(Object.entries(given).filter(([k]) => k in wf.variables));
  const { values, problems } = runVariableProblems(wf.variables, known);
  const record = (outcome: FireOutcome, runId: string | null, detail: string | null) =>
    recordFire(tx, deps, wf, f, outcome, runId, detail);
  if (problems.length)
    return { fired: await record('invalid', null, `Bad variables: ${problems.join(' ')}`), started: null };
  const started = await createRunIn(tx, deps, wf, {
    projectId: wf.projectId,
    variables: values,
    metadata: f.metadata ?? {},
    trigger: f.run,
    triggerRef: `${f.trigger}:${f.ref}`,
    serialKey: f.serialKey ?? null,
  });
  if (!started.ok) {
    const detail =
      started.reason === 'rate_limited'
        ? `Rate limit reached; room again in ${started.retryAfterSec} s.`
        : started.message;
    return { fired: await record(started.reason, null, detail), started };
  }
  return { fired: await record(started.held ? 'queued' : 'started', started.id, null), started };
}

export async function fire(deps: Deps, wf: WorkflowRow, f: Fire): Promise<Fired> {
  const { fired, started } = await deps.db.transaction((tx) => fireIn(tx, deps, wf, f));
  if (started) await afterStart(deps, started);
  return fired;
}
