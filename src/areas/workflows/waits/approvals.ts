import type { Deps } from '../../../deps.ts';
import { workflowsErrors } from '../errors.ts';
import { findRun, getRun } from '../runs.ts';
import type { WfScope } from '../workflows.ts';
import { type Decision, resolveWait } from './resolve.ts';

// Deciding an approval wait: by API (the caller's organization and environment, another's run is a 404) or
// by the one-time signed link (public-links.ts, http.ts). The first decision wins; any later one is refused.

export async function decide(deps: Deps, waitId: string, stepId: string, d: Decision): Promise<void> {
  const r = await resolveWait(deps, waitId, { kind: 'approval', decision: d });
  if (r === 'already_decided') throw workflowsErrors.approvalUsed();
  if (r === 'not_waiting') throw workflowsErrors.stepNotWaiting(stepId, 'no longer waiting');
}

export async function decideByApi(
  deps: Deps,
  s: WfScope,
  runId: string,
  stepId: string,
  body: { approved: boolean; comment?: string | undefined },
) {
  const run = await findRun(deps, s, runId);
  const { rows } = await deps.db.query<{ id: string; status: string; decided_at: Date | null }>(
    `select w.id, s.status, w.decided_at from workflow_step_states s
       left join workflow_waits w on w.run_id = s.run_id and w.step_id = s.step_id and w.kind = 'approval'
      where s.run_id = $1 and s.step_id = $2`,
    [run.id, stepId],
  );
  const row = rows[0];
  if (!row) throw workflowsErrors.stepNotWaiting(stepId, 'not a step of this run');
  if (row.id && row.decided_at) throw workflowsErrors.approvalUsed();
  if (!row.id || row.status !== 'waiting') throw workflowsErrors.stepNotWaiting(stepId, row.status);
  const r = await resolveWait(deps, row.id, { kind: 'approval', decision: { ...body, by: 'api' } });
  if (r === 'already_decided') throw workflowsErrors.approvalUsed();
  if (r === 'not_waiting') throw workflowsErrors.stepNotWaiting(stepId, 'no longer waiting');
  return getRun(deps, s, run.id);
}
