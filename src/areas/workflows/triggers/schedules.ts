import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Deps } from '../../../deps.ts';
import { releaseHeld } from '../scheduler.ts';
import { workflows } from '../tables.ts';
import { scheduleRef } from './config.ts';
import { lastSlot, parseCron } from './cron.ts';
import { fire, recordFire } from './fire.ts';

// Cron schedules. A minute tick on workers (`workflows.triggers.tick`) finds, per schedule, the latest slot
// at or before now (the test clock in tests). A slot newer than the one last claimed is claimed with a
// conditional update — the worker whose update wins fires it, so several workers never fire one slot
// twice — and fired by the schedule's overlap policy. After downtime the latest missed slot is the one
// found, so a schedule catches up once, not once per missed slot; with catchUp false a slot found more
// than LATE_MS after its time is recorded as missed instead. A slot is fired at most once (a process dying
// between the claim and the run loses that slot). The tick also releases held runs a dead process left.

export const TRIGGERS_TICK_JOB = 'workflows.triggers.tick';
export const TRIGGERS_TICK_CRON = '* * * * *';
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
    const { rows: won } = await deps.db.query(
      `update workflow_schedules set last_slot = $2
        where id = $1 and (last_slot is null or last_slot < $2) returning id`,
      [s.id, slot.toISOString()],
    );
    if (!won.length) continue;
    const [wf] = await deps.db.orm.select().from(workflows).where(eq(workflows.id, s.workflow_id));
    if (!wf) continue;
    const f = { trigger: 'schedule' as const, ref: s.ref, slot };
    if (!s.catch_up && now.getTime() - slot.getTime() > LATE_MS) {
      await recordFire(
        deps,
        wf,
        f,
        'missed',
        null,
        'Pier was not running at this time and catchUp is false.',
      );
      continue;
    }
    if (s.overlap === 'skip') {
      const { rows: busy } = await deps.db.query(
        `select id from workflow_runs where workflow_id = $1 and trigger_ref = $2
            and status in ('pending', 'running') limit 1`,
        [wf.id, `schedule:${s.ref}`],
      );
      if (busy.length) {
        await recordFire(
          deps,
          wf,
          f,
          'skipped',
          null,
          "The schedule's previous run is still going (overlap: skip).",
        );
        continue;
      }
    }
    await fire(deps, wf, {
      ...f,
      given: s.variables,
      run: { type: 'schedule', ref: s.ref, slot: slot.toISOString() },
      serialKey: s.overlap === 'queue' ? `schedule:${s.ref}` : null,
    });
  }
  const { rows: held } = await deps.db.query<{ workflow_id: string }>(
    `select distinct workflow_id from workflow_runs where held and status = 'pending'`,
  );
  for (const h of held) await releaseHeld(deps, h.workflow_id);
}
