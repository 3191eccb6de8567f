import type { Deps } from '../../../deps.ts';
import { webhookUrl } from '../public-links.ts';
import type { RunStatus, workflows } from '../tables.ts';
import type { FireOutcome } from '../trigger-tables.ts';
import { scheduleRef } from './config.ts';
import { nextSlot, parseCron } from './cron.ts';

// Each trigger of a workflow with its last fires (what it started, skipped or refused, and the run's status
// now): GET /v1/workflows/{id}/triggers and the dashboard's workflow card.

type WorkflowRow = typeof workflows.$inferSelect;
const LAST = 10;

export type FireOut = {
  firedAt: string;
  slot: string | null;
  outcome: FireOutcome;
  runId: string | null;
  runStatus: RunStatus | null;
  detail: string | null;
};

export async function triggersView(deps: Deps, wf: WorkflowRow) {
  const { rows } = await deps.db.query<{
    trigger: string;
    ref: string;
    fired_at: Date | string;
    slot: Date | string | null;
    outcome: FireOutcome;
    run_id: string | null;
    detail: string | null;
    run_status: RunStatus | null;
  }>(
    `select * from (
       select f.trigger, f.ref, f.fired_at, f.slot, f.outcome, f.run_id, f.detail, r.status as run_status,
              row_number() over (partition by f.trigger, f.ref order by f.fired_at desc, f.id desc) as n
         from workflow_trigger_fires f left join workflow_runs r on r.id = f.run_id
        where f.workflow_id = $1) x
      where n <= $2 order by fired_at desc`,
    [wf.id, LAST],
  );
  const fires = (trigger: string, ref: string): FireOut[] =>
    rows
      .filter((r) => r.trigger === trigger && r.ref === ref)
      .map((r) => ({
        firedAt: new Date(r.fired_at).toISOString(),
        slot: r.slot ? new Date(r.slot).toISOString() : null,
        outcome: r.outcome,
        runId: r.run_id,
        runStatus: r.run_status,
        detail: r.detail,
      }));
  const now = deps.clock.now();
  const t = wf.triggers;
  return {
    schedules: (t.schedules ?? []).map((s) => {
      const tz = s.timezone ?? 'UTC';
      let next: Date | null = null;
      try {
        next = nextSlot(parseCron(s.cron), tz, now);
      } catch {
        next = null;
      }
      return {
        cron: s.cron,
        timezone: tz,
        overlap: s.overlap ?? 'skip',
        catchUp: s.catchUp ?? true,
        nextRunAt: next?.toISOString() ?? null,
        lastFires: fires('schedule', scheduleRef(s)),
      };
    }),
    events: [...new Set((t.events ?? []).map((e) => e.name))].map((name) => ({
      name,
      filters: (t.events ?? []).filter((e) => e.name === name).map((e) => e.filter ?? null),
      lastFires: fires('event', name),
    })),
    webhook: {
      enabled: !!t.webhook?.enabled,
      url: t.webhook?.enabled && wf.hookNonce ? webhookUrl(deps, wf.id, wf.hookNonce) : null,
      lastFires: fires('webhook', 'webhook'),
    },
  };
}
