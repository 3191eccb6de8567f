import crypto from 'node:crypto';
import { listen, type Unlisten } from '../../core/db/notify.ts';
import type { Deps } from '../../deps.ts';
import type { StepDef } from './definition.ts';
import { backoffFor, CRASH_LIMIT, isRetryable, retryPolicy } from './retry-policy.ts';
import { applyEffects, WAKE_CANCEL, WAKE_CHANNEL } from './scheduler.ts';
import { completeStepIn, endAttemptIn, failStepIn } from './step-end.ts';
import type { StepCtx } from './steps/context.ts';
import { StepError } from './steps/context.ts';
import { executeStep } from './steps/execute.ts';
import { stepInput } from './steps/input.ts';

// The run engine of a worker process. Ready steps are claimed straight from workflow_step_states with
// FOR UPDATE SKIP LOCKED (docs/decisions/050-workflow-step-claims.md), so several worker processes share
// the work and no step is claimed twice. A claimed step is leased: the worker renews the lease every third of
// WORKFLOW_LEASE_MS, and a step whose lease ran out (its worker was SIGKILLed) is claimable again, so it is
// retried on another worker within seconds. The heartbeat also finds steps that stopped being this worker's
// (the run was cancelled or failed) and aborts them; a NOTIFY makes that immediate. Claiming a step whose
// lease ran out counts a crash, not an attempt (retry-policy.ts), so dead workers never spend a retry budget.
// A worker never claims a step it is running itself: under load its renewal can come after the lease ran
// out, and claiming its own step would run it twice at once in one process.

/** An idle worker looks for due retries and expired leases this often (wake-ups cover new work). */
const IDLE_POLL_MS = 1000;

type Claimed = { run_id: string; step_id: string; attempts: number; crashes: number };
type Running = { runId: string; ac: AbortController };

const CLAIM_SQL = `
  update workflow_step_states s
     set status = 'running', worker_id = $1,
         attempts = s.attempts + case when s.status = 'running' then 0 else 1 end,
         crashes = s.crashes + case when s.status = 'running' then 1 else 0 end,
         lease_until = now() + make_interval(secs => $2::double precision / 1000),
         started_at = coalesce(s.started_at, now())
    from (select run_id, step_id from workflow_step_states
           where (status = 'ready' and (next_attempt_at is null or next_attempt_at <= now()))
              or (status = 'running' and lease_until < now()
                  and not ((run_id::text || '/' || step_id) = any($4::text[])))
           order by next_attempt_at nulls first
           limit $3
           for update skip locked) c
   where s.run_id = c.run_id and s.step_id = c.step_id
  returning s.run_id, s.step_id, s.attempts, s.crashes`;

/** Opens an attempt row with the step's input; an attempt left open by a dead worker is closed as interrupted. */
const ATTEMPT_SQL = `
  with prev as (
    update workflow_step_attempts set outcome = 'interrupted', ended_at = now()
     where run_id = $1 and step_id = $2 and outcome = 'running' returning n)
  insert into workflow_step_attempts (run_id, step_id, n, attempt, outcome, input, started_at)
  select $1, $2, coalesce(max(n), 0) + 1, $3, 'running', $4, now()
    from workflow_step_attempts where run_id = $1 and step_id = $2`;

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Outputs are stored and read by every later step: a step's, and a run's in all, are capped (docs/workflows.md). */
function outputProblem(deps: Deps, bytes: number, before: number): string | null {
  const { stepOutputMaxBytes: step, runOutputMaxBytes: run } = deps.config.workflows;
  if (bytes > step)
    return `Output too large: ${mb(bytes)} of JSON, over the ${mb(step)} limit for a step's output.`;
  if (before + bytes > run)
    return `Output too large: the run's step outputs would reach ${mb(before + bytes)}, over the ${mb(run)} limit for a run.`;
  return null;
}

export class WorkflowEngine {
  readonly workerId = `wf-${crypto.randomUUID()}`;
  readonly #deps: Deps;
  readonly #running = new Map<string, Running>();
  #stopping = false;
  #wake: (() => void) | null = null;
  #loop: Promise<void> | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #unlisten: Unlisten | null = null;

  constructor(deps: Deps) {
    this.#deps = deps;
  }

  async start(): Promise<void> {
    const db = this.#deps.db;
    this.#unlisten = await listen(db, db.pool?.options.connectionString, WAKE_CHANNEL, (p) => {
      if (p.startsWith(WAKE_CANCEL)) this.#abortRun(p.slice(WAKE_CANCEL.length));
      else this.#wake?.();
    });
    const every = Math.max(100, Math.floor(this.#deps.config.workflows.leaseMs / 3));
    this.#heartbeat = setInterval(() => void this.#renew().catch(() => {}), every);
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#wake?.();
    for (const r of this.#running.values()) r.ac.abort(new Error('worker stopping'));
    await this.#loop;
    for (let i = 0; i < 100 && this.#running.size; i++) await new Promise((ok) => setTimeout(ok, 20));
    // What this worker held goes back to the pool at once rather than after its lease.
    await this.#deps.db
      .query(
        `update workflow_step_states set status = 'ready', lease_until = null, worker_id = null,
           attempts = greatest(attempts - 1, 0)
          where worker_id = $1 and status = 'running'`,
        [this.workerId],
      )
      .catch(() => {});
    await this.#unlisten?.();
  }

  #abortRun(runId: string): void {
    for (const r of this.#running.values()) if (r.runId === runId) r.ac.abort(new Error('run ended'));
  }

  async #run(): Promise<void> {
    const slots = this.#deps.config.workflows.workerSlots;
    while (!this.#stopping) {
      const free = slots - this.#running.size;
      if (free > 0) {
        const leaseMs = this.#deps.config.workflows.leaseMs;
        const rows = await this.#deps.db
          .query<Claimed>(CLAIM_SQL, [this.workerId, leaseMs, free, [...this.#running.keys()]])
          .then((r) => r.rows)
          .catch(() => [] as Claimed[]);
        for (const row of rows) this.#start(row);
        if (rows.length === free) continue;
      }
      await new Promise<void>((ok) => {
        const timer = setTimeout(() => this.#wake?.(), IDLE_POLL_MS);
        this.#wake = () => {
          clearTimeout(timer);
          this.#wake = null;
          ok();
        };
      });
    }
  }

  #start(row: Claimed): void {
    const key = `${row.run_id}/${row.step_id}`;
    const ac = new AbortController();
    this.#running.set(key, { runId: row.run_id, ac });
    void this.#execute(row, ac)
      .catch((err) => this.#deps.log.error({ err, runId: row.run_id, stepId: row.step_id }, 'workflow step'))
      .finally(() => {
        this.#running.delete(key);
        this.#wake?.();
      });
  }

  /** Renews the leases of the steps this worker runs; aborts those that are no longer its own. */
  async #renew(): Promise<void> {
    if (!this.#running.size) return;
    const keys = [...this.#running.keys()];
    const { rows } = await this.#deps.db.query<{ key: string }>(
      `update workflow_step_states
          set lease_until = now() + make_interval(secs => $2::double precision / 1000)
        where worker_id = $1 and status = 'running' and (run_id::text || '/' || step_id) = any($3::text[])
        returning run_id::text || '/' || step_id as key`,
      [this.workerId, this.#deps.config.workflows.leaseMs, keys],
    );
    const mine = new Set(rows.map((r) => r.key));
    for (const k of keys) if (!mine.has(k)) this.#running.get(k)?.ac.abort(new Error('lease lost'));
  }

  async #execute(row: Claimed, ac: AbortController): Promise<void> {
    const deps = this.#deps;
    const { rows: runs } = await deps.db.query<{
      org_id: string;
      environment: 'production' | 'sandbox';
      project_id: string;
      steps: StepDef[];
      variables: Record<string, unknown>;
    }>(
      `update workflow_runs set status = 'running', started_at = coalesce(started_at, now())
        where id = $1 and status in ('pending', 'running')
        returning org_id, environment, project_id, steps, variables`,
      [row.run_id],
    );
    const run = runs[0];
    const def = run?.steps.find((s) => s.id === row.step_id);
    if (!run || !def) return;
    if (row.crashes > CRASH_LIMIT) {
      const msg = `Its worker stopped ${row.crashes} times while running it; a step that stops its worker every time is not run again.`;
      await this.#fail(row, def, new StepError(msg));
      return;
    }
    const { rows: done } = await deps.db.query<{ step_id: string; output: unknown; bytes: number | null }>(
      `select step_id, output, octet_length(output::text) as bytes
         from workflow_step_states where run_id = $1 and status = 'completed'`,
      [row.run_id],
    );
    const ctx: StepCtx = {
      deps,
      orgId: run.org_id,
      environment: run.environment,
      projectId: run.project_id,
      runId: row.run_id,
      path: row.step_id,
      signal: ac.signal,
      data: {
        variables: run.variables,
        steps: Object.fromEntries(done.map((d) => [d.step_id, { output: d.output }])),
      },
    };
    await deps.db.query(ATTEMPT_SQL, [
      row.run_id,
      row.step_id,
      row.attempts,
      JSON.stringify(stepInput(ctx, def)),
    ]);
    let result: Awaited<ReturnType<typeof executeStep>>;
    try {
      result = await executeStep(ctx, def);
    } catch (err) {
      // Aborted: cancelled, failed elsewhere, lease lost or stopping — the row already says what happened.
      if (ac.signal.aborted) return;
      await this.#fail(row, def, err);
      return;
    }
    if (ac.signal.aborted) return;
    const json = JSON.stringify(result.output ?? null);
    const tooLarge = outputProblem(
      deps,
      Buffer.byteLength(json),
      done.reduce((n, d) => n + Number(d.bytes ?? 0), 0),
    );
    if (tooLarge) {
      await this.#fail(row, def, new StepError(tooLarge));
      return;
    }
    await this.#complete(row, json, result.credits);
  }

  /** Stores the output and schedules what follows, if the step is still this worker's. */
  async #complete(row: Claimed, json: string, credits: number): Promise<void> {
    const owner = { status: 'running' as const, workerId: this.workerId };
    const s = { runId: row.run_id, stepId: row.step_id, owner };
    const effects = await this.#deps.db.transaction((tx) =>
      completeStepIn(tx, this.#deps, s, json, credits, null),
    );
    if (effects) await applyEffects(this.#deps, effects);
  }

  async #fail(row: Claimed, def: StepDef, err: unknown): Promise<void> {
    const deps = this.#deps;
    const message = String((err as Error)?.message ?? err).slice(0, 1000);
    const retry = retryPolicy(def);
    if (isRetryable(err, retry) && row.attempts < retry.maxAttempts) {
      const delay = backoffFor(retry, row.attempts);
      await deps.db.transaction(async (tx) => {
        const { rows: mine } = await tx.query(
          `update workflow_step_states set status = 'ready', last_error = $3, lease_until = null, worker_id = null,
             next_attempt_at = now() + make_interval(secs => $4::double precision / 1000)
            where run_id = $1 and step_id = $2 and status = 'running' and worker_id = $5 returning step_id`,
          [row.run_id, row.step_id, message, delay, this.workerId],
        );
        if (mine.length) await endAttemptIn(tx, row.run_id, row.step_id, 'retrying', message);
      });
      return;
    }
    const owner = { status: 'running' as const, workerId: this.workerId };
    const s = { runId: row.run_id, stepId: row.step_id, owner, def };
    const effects = await deps.db.transaction((tx) => failStepIn(tx, deps, s, err, row.attempts));
    if (effects) await applyEffects(deps, effects);
  }
}

export async function startEngine(deps: Deps): Promise<() => Promise<void>> {
  const engine = new WorkflowEngine(deps);
  await engine.start();
  return () => engine.stop();
}
