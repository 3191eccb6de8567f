import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Queryable } from '../../../core/db/client.ts';
import type { Deps } from '../../../deps.ts';
import { releaseHeld } from '../scheduler.ts';
import { afterStart, type Started } from '../start.ts';
import { workflows } from '../tables.ts';
import { scheduleRef } from './config.ts';
import { lastSlot, parseCron } from './cron.ts';
import { fireIn, recordFire } from './fire.ts';

// Cron schedules. A minute tick on workers (`workflows.triggers.tick`) finds, per schedule, the latest slot
// at or before now (the test clock in tests). A slot newer than the one last claimed is claimed with a
// conditional update — the worker whose update wins fires it, so several workers never fire one slot
// twice — and fired by the schedule's overlap policy. After downtime the latest missed slot is the one
// found, so a schedule catches up once, not once per missed slot; with catchUp false a slot found more
// than LATE_MS after its time is recorded as missed instead. The claim, the run and the fire's record are
// one transaction, so a slot is fired exactly once (decision 130). The tick also releases held runs a dead
// process left (and, in tick.ts, delivers stored events a dead process left).

/** A slot found later than this after its time counts as missed (the tick runs every minute). */
export const LATE_MS = 2 * 60_000;

type WorkflowRow = typeof workflows.$inferSelect;

/** Makes the schedule rows match the workflow's `triggers.schedules`; an unchanged schedule keeps its state. */
export async function syncSchedules(deps: Deps, wf: WorkflowRow): Promise<void> {
  const wanted = wf.triggers.schedules ?? [];
  const refs = wanted.map(scheduleRef);
  await deps.db.query(
    'delete from workflow_schedules where workflow_id = $1 and not (ref = any($2::text[]))',
    [wf.id, refs],
  );
  const now = deps.clock.now().toISOString();
  for (const s of wanted)
    await deps.db.query(
      `insert into workflow_schedules (org_id, environment, workflow_id, ref, cron, timezone, overlap, catch_up,
         variables, since)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       on conflict (workflow_id, ref) do update set overlap = excluded.overlap, catch_up = excluded.catch_up,
         variables = excluded.variables`,
      [
        wf.orgId,
        wf.environment,
        wf.id,
        scheduleRef(s),
        s.cron.trim(),
        s.timezone ?? 'UTC',
        s.overlap ?? 'skip',
        s.catchUp ?? true,
        JSON.stringify(s.variables ?? {}),
        now,
      ],
    );
  if (wf.triggers.webhook?.enabled && !wf.hookNonce)
    await deps.db.query('update workflows set hook_nonce = $2 where id = $1 and hook_nonce is null', [
      wf.id,
      crypto.randomBytes(12).toString('base64url'),
    ]);
}

type ScheduleRow = {
  id: string;
  workflow_id: string;
  ref: string;
  cron: string;
  timezone: string;
  overlap: 'skip' | 'allow' | 'queue';
  catch_up: boolean;
  variables: Record<string, unknown>;
  since: Date | string;
  last_slot: Date | string | null;
};

/**
 * Claims the slot and fires it in one transaction: another worker's claim waits on the row lock and then
 * finds the slot taken, and a process dying before the commit leaves the slot unclaimed for the next tick.
 */
async function fireSlotIn(
  tx: Queryable,
  deps: Deps,
  s: ScheduleRow,
  wf: WorkflowRow,
  slot: Date,
  now: Date,
): Promise<{ started: Started | null }> {
  const none = { started: null };
  const { rows: won } = await tx.query(
    `update workflow_schedules set last_slot = $2
      where id = $1 and (last_slot is null or last_slot < $2) returning id`,
    [s.id, slot.toISOString()],
  );
  if (!won.length) return none;
  const f = { trigger: 'schedule' as const, ref: s.ref, slot };
  if (!s.catch_up && now.getTime() - slot.getTime() > LATE_MS) {
    await recordFire(
      tx,
      deps,
      wf,
      f,
      'missed',
      null,
      'Pier was not running at this time and catchUp is false.',
    );
    return none;
  }
  if (s.overlap === 'skip') {
    const { rows: busy } = await tx.query(
      `select id from workflow_runs where workflow_id = $1 and trigger_ref = $2
          and status in ('pending', 'running') limit 1`,
      [wf.id, `schedule:${s.ref}`],
    );
    if (busy.length) {
      const why = "The schedule's previous run is still going (overlap: skip).";
      await recordFire(tx, deps, wf, f, 'skipped', null, why);
      return none;
    }
  }
  return fireIn(tx, deps, wf, {
    ...f,
    given: s.variables,
    run: { type: 'schedule', ref: s.ref, slot: slot.toISOString() },
    serialKey: s.overlap === 'queue' ? `schedule:${s.ref}` : null,
  });
}

export async function tickSchedules(deps: Deps): Promise<void> {
  const now = deps.clock.now();
  const { rows } = await deps.db.query<ScheduleRow>('select * from workflow_schedules');
  for (const s of rows) {
    let slot: Date | null;
    try {
      slot = lastSlot(parseCron(s.cron), s.timezone, now);
    } catch {
      continue; // checked at create; a zone a runtime upgrade dropped must not stop the others
    }
    if (!slot || slot <= new Date(s.since) || (s.last_slot && slot <= new Date(s.last_slot))) continue;
    try {
      const [wf] = await deps.db.orm.select().from(workflows).where(eq(workflows.id, s.workflow_id));
      if (!wf) continue;
      const { started } = await deps.db.transaction((tx) => fireSlotIn(tx, deps, s, wf, slot, now));
      if (started) await afterStart(deps, started);
    } catch (err) {
      // Nothing of this slot was kept (one transaction): the next tick fires it. The others go on.
      deps.log.error({ err, scheduleId: s.id }, 'workflow schedule');
    }
  }
  const { rows: held } = await deps.db.query<{ workflow_id: string }>(
    `select distinct workflow_id from workflow_runs where held and status = 'pending'`,
  );
  for (const h of held) await releaseHeld(deps, h.workflow_id);
}
