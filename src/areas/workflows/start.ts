import type { Queryable } from '../../core/db/client.ts';
import type { Deps } from '../../deps.ts';
import { concurrencyKeyOf, lockWorkflowIn, mustHoldIn, rateLimitWaitIn } from './admission.ts';
import { advanceRun } from './scheduler.ts';
import type { workflows } from './tables.ts';
import type { RunTrigger } from './triggers/config.ts';

// One place every run is created, whatever started it (an API call, a schedule, an event, the inbound
// webhook): the rate limit is checked, the concurrency key evaluated and the run held or not, all under
// the workflow's advisory lock, then the run and a pending row per step are written in one transaction —
// the caller's, when what started the run must be recorded with it (a schedule's slot, a stored event's
// delivery), so the two commit together or not at all.

type WorkflowRow = typeof workflows.$inferSelect;

export type NewRun = {
  projectId: string;
  /** Already checked against the workflow's variable definitions (defaults filled). */
  variables: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  webhook?: { url: string; secret: string };
  trigger: RunTrigger;
  triggerRef?: string | null;
  serialKey?: string | null;
};

export type Started =
  | { ok: true; id: string; held: boolean }
  | { ok: false; reason: 'rate_limited'; retryAfterSec: number }
  | { ok: false; reason: 'invalid'; message: string };

export async function createRun(deps: Deps, wf: WorkflowRow, r: NewRun): Promise<Started> {
  const started = await deps.db.transaction((tx) => createRunIn(tx, deps, wf, r));
  await afterStart(deps, started);
  return started;
}

/** Once the transaction of createRunIn committed: a run not held starts. */
export async function afterStart(deps: Deps, started: Started): Promise<void> {
  if (started.ok && !started.held) await advanceRun(deps, started.id);
}

/** createRun inside the caller's transaction; call afterStart once it committed. */
export async function createRunIn(tx: Queryable, deps: Deps, wf: WorkflowRow, r: NewRun): Promise<Started> {
  let concurrencyKey: string | null;
  try {
    concurrencyKey = await concurrencyKeyOf(wf.limits, r.variables);
  } catch (err) {
    return {
      ok: false,
      reason: 'invalid',
      message: `limits.concurrency.key failed: ${(err as Error).message}`,
    };
  }
  const now = deps.clock.now();
  await lockWorkflowIn(tx, wf.id);
  const wait = await rateLimitWaitIn(tx, wf.id, wf.limits, now);
  if (wait > 0) return { ok: false, reason: 'rate_limited', retryAfterSec: wait };
  const keys = { concurrencyKey, serialKey: r.serialKey ?? null };
  const held = await mustHoldIn(tx, wf.id, wf.limits, keys);
  const { rows } = await tx.query<{ id: string }>(
    `insert into workflow_runs (org_id, environment, project_id, workflow_id, status, steps, variables,
       metadata, output, webhook_url, webhook_secret_enc, trigger, trigger_ref, held, concurrency_key,
       serial_key, created_at)
     values ($1, $2, $3, $4, 'pending', $5, $6, $7, '{}', $8, $9, $10, $11, $12, $13, $14, $15) returning id`,
    [
      wf.orgId,
      wf.environment,
      r.projectId,
      wf.id,
      JSON.stringify(wf.steps),
      JSON.stringify(r.variables),
      JSON.stringify(r.metadata ?? {}),
      r.webhook?.url ?? null,
      r.webhook ? deps.keyring.encrypt(r.webhook.secret) : null,
      JSON.stringify(r.trigger),
      r.triggerRef ?? null,
      held,
      concurrencyKey,
      keys.serialKey,
      now.toISOString(),
    ],
  );
  const id = rows[0]!.id;
  if (wf.steps.length)
    await tx.query(
      `insert into workflow_step_states (run_id, step_id, position, status)
       select $1, s.id, s.pos, 'pending' from unnest($2::text[]) with ordinality as s(id, pos)`,
      [id, wf.steps.map((x) => x.id)],
    );
  return { ok: true, id, held };
}
