import type { Deps } from '../../deps.ts';

// A loop's memo: each item's completed sub-steps, written as each one completes, read when the loop is
// claimed (again, after a crash or a retry), so only the items in flight when a worker died run again.

export type Memoised = { output: unknown; credits: number };
/** Keyed by `<index>/<subStepId>`. */
export type LoopMemo = Map<string, Memoised>;

export const memoKey = (index: number, subId: string) => `${index}/${subId}`;

export async function loadLoopMemo(deps: Deps, runId: string, stepId: string): Promise<LoopMemo> {
  const { rows } = await deps.db.query<{
    item_index: number;
    sub_step_id: string;
    output: unknown;
    credits_used: number;
  }>(
    `select item_index, sub_step_id, output, credits_used from workflow_loop_items
      where run_id = $1 and step_id = $2`,
    [runId, stepId],
  );
  return new Map(
    rows.map((r) => [
      memoKey(r.item_index, r.sub_step_id),
      { output: r.output, credits: Number(r.credits_used) },
    ]),
  );
}

export async function saveLoopItem(
  deps: Deps,
  at: { runId: string; stepId: string; index: number; subId: string },
  m: Memoised & { attempts: number },
): Promise<void> {
  await deps.db.query(
    `insert into workflow_loop_items (run_id, step_id, item_index, sub_step_id, output, attempts, credits_used, completed_at)
     values ($1, $2, $3, $4, $5, $6, $7, now()) on conflict do nothing`,
    [at.runId, at.stepId, at.index, at.subId, JSON.stringify(m.output ?? null), m.attempts, m.credits],
  );
}

/**
 * completedItems/totalItems on the loop's step state, for the run's readers. Items' writes can commit out of
 * order on a pooled PostgreSQL, and completed items only grow (they are memoised): the count never moves back.
 */
export async function saveLoopProgress(
  deps: Deps,
  runId: string,
  stepId: string,
  completed: number,
  total: number,
): Promise<void> {
  await deps.db.query(
    `update workflow_step_states set completed_items = greatest(coalesce(completed_items, 0), $3), total_items = $4
      where run_id = $1 and step_id = $2 and status = 'running'`,
    [runId, stepId, completed, total],
  );
}
