import { createPatch, diffWords } from 'diff';
import { and, desc, eq, lt, ne, or, type SQL } from 'drizzle-orm';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { cursorPage, decodeCursor, keysetSchema } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { checkConfig, runnerFor } from './batches.ts';
import { webdataErrors } from './errors.ts';
import type { Scope } from './extractions.ts';
import type { ScheduleBody, SchedulesQuery } from './schema.ts';
import type { Region } from './screenshots/change.ts';
import { compareScreenshotAssets } from './screenshots/kind.ts';
import { type ScheduleFrequency, webdataScheduleRuns, webdataSchedules } from './tables.ts';

// Schedules: a cron tick (every minute, on workers) looks at active schedules and runs each one whose
// current slot (the start of its hour, UTC day or ISO week) has no run yet. The run row is inserted first
// under a unique (schedule, slot) index: the worker whose insert wins runs it, so several workers, or a
// restart mid-slot, never run one slot twice. With detectChanges, the run's text is compared with the
// previous completed run's by a word diff; changeScore is the changed share of the text (0 to 1). Screenshot
// schedules compare the pictures instead (screenshots/kind.ts): the changed share of pixels, the regions.

export const SCHEDULE_TICK_JOB = 'webdata.schedules.tick';
export const SCHEDULE_TICK_CRON = '* * * * *';
export const SCHEDULE_RUN_JOB = 'webdata.schedules.run';
export const DEFAULT_CHANGE_THRESHOLD = 0.05;
const MAX_DIFF_CHARS = 20_000;
const STALE_RUN_MS = 3600_000;

type Row = typeof webdataSchedules.$inferSelect;
type RunRow = typeof webdataScheduleRuns.$inferSelect;

/** Minutes between a schedule's runs: the presets' own, else its `intervalMinutes`. */
export function intervalOf(s: { frequency: ScheduleFrequency; intervalMinutes: number | null }): number {
  if (s.frequency === 'interval') return s.intervalMinutes ?? 60;
  return { hourly: 60, daily: 1440, weekly: 10_080 }[s.frequency];
}

export function slotOf(frequency: ScheduleFrequency, now: Date, intervalMinutes?: number | null): Date {
  if (frequency === 'interval') {
    const ms = (intervalMinutes ?? 60) * 60_000;
    return new Date(Math.floor(now.getTime() / ms) * ms);
  }
  const d = new Date(now);
  d.setUTCMinutes(0, 0, 0);
  if (frequency === 'hourly') return d;
  d.setUTCHours(0);
  if (frequency === 'daily') return d;
  const sinceMonday = (d.getUTCDay() + 6) % 7;
  d.setUTCDate(d.getUTCDate() - sinceMonday);
  return d;
}

const out = (s: Row) => ({
  id: s.id,
  name: s.name,
  url: s.url,
  type: s.type,
  frequency: s.frequency,
  intervalMinutes: intervalOf(s),
  config: s.config,
  detectChanges: s.detectChanges,
  changeThreshold: s.changeThreshold,
  isActive: s.isActive,
  lastRunAt: s.lastRunAt?.toISOString() ?? null,
  createdAt: s.createdAt.toISOString(),
});

const mine = (scope: Scope) =>
  and(eq(webdataSchedules.orgId, scope.orgId), eq(webdataSchedules.environment, scope.environment));

/** The stored cadence: a preset frequency, or `interval` with its minutes (a 400 when they disagree). */
function cadenceOf(body: ScheduleBody): { frequency: ScheduleFrequency; intervalMinutes: number | null } {
  if (body.intervalMinutes === undefined) {
    if (body.frequency === 'interval')
      throw errors.validation('frequency "interval" needs `intervalMinutes`.');
    return { frequency: body.frequency ?? 'daily', intervalMinutes: null };
  }
  if (body.frequency && body.frequency !== 'interval') {
    throw errors.validation('Give either a frequency or intervalMinutes, not both.');
  }
  return { frequency: 'interval', intervalMinutes: body.intervalMinutes };
}

export async function createSchedule(deps: Deps, scope: Scope, body: ScheduleBody) {
  const cadence = cadenceOf(body);
  const config = checkConfig(body.type, body.config ?? {});
  const [row] = await deps.db.orm
    .insert(webdataSchedules)
    .values({
      ...scope,
      name: body.name,
      url: body.url,
      type: body.type,
      ...cadence,
      config,
      detectChanges: body.detectChanges ?? false,
      changeThreshold: body.changeThreshold ?? DEFAULT_CHANGE_THRESHOLD,
      isActive: true,
      createdAt: deps.clock.now(),
    })
    .returning();
  return out(row!);
}

async function own(deps: Deps, scope: Scope, id: string): Promise<Row> {
  if (!isUuid(id)) throw webdataErrors.scheduleNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(webdataSchedules)
    .where(and(mine(scope), eq(webdataSchedules.id, id)));
  if (!row) throw webdataErrors.scheduleNotFound();
  return row;
}

export async function getSchedule(deps: Deps, scope: Scope, id: string) {
  return out(await own(deps, scope, id));
}

export async function listSchedules(deps: Deps, scope: Scope, q: SchedulesQuery) {
  const cursorScope = `webdata.schedules:${scope.orgId}:${scope.environment}`;
  const conds: (SQL | undefined)[] = [mine(scope)];
  if (q.isActive) conds.push(eq(webdataSchedules.isActive, q.isActive === 'true'));
  if (q.type) conds.push(eq(webdataSchedules.type, q.type));
  if (q.cursor) {
    const k = decodeCursor(deps.keyring, cursorScope, q.cursor, keysetSchema);
    const at = new Date(k.at);
    conds.push(
      or(
        lt(webdataSchedules.createdAt, at),
        and(eq(webdataSchedules.createdAt, at), lt(webdataSchedules.id, k.id)),
      ),
    );
  }
  const rows = await deps.db.orm
    .select()
    .from(webdataSchedules)
    .where(and(...conds))
    .orderBy(desc(webdataSchedules.createdAt), desc(webdataSchedules.id))
    .limit(q.limit + 1);
  const page = cursorPage(deps.keyring, cursorScope, rows, q.limit, (r) => ({
    at: r.createdAt.toISOString(),
    id: r.id,
  }));
  return { items: page.items.map(out), nextCursor: page.nextCursor };
}

async function setActive(deps: Deps, id: string, isActive: boolean): Promise<Row> {
  const [done] = await deps.db.orm
    .update(webdataSchedules)
    .set({ isActive })
    .where(eq(webdataSchedules.id, id))
    .returning();
  return done!;
}

export async function toggleSchedule(deps: Deps, scope: Scope, id: string) {
  const row = await own(deps, scope, id);
  return { isActive: (await setActive(deps, id, !row.isActive)).isActive };
}

/** Pause and resume are idempotent (toggle is not): a retried request leaves the state asked for. */
export async function pauseSchedule(deps: Deps, scope: Scope, id: string) {
  await own(deps, scope, id);
  return out(await setActive(deps, id, false));
}

export async function resumeSchedule(deps: Deps, scope: Scope, id: string) {
  await own(deps, scope, id);
  return out(await setActive(deps, id, true));
}

/**
 * "Run now": a run outside the schedule's slots (paused schedules too), queued as its own job so the
 * request answers at once. One run at a time per schedule: a second while one is in progress is a 409.
 */
export async function runScheduleNow(deps: Deps, scope: Scope, id: string) {
  const s = await own(deps, scope, id);
  const [busy] = await deps.db.orm
    .select({ id: webdataScheduleRuns.id })
    .from(webdataScheduleRuns)
    .where(and(eq(webdataScheduleRuns.scheduleId, id), eq(webdataScheduleRuns.status, 'processing')))
    .limit(1);
  if (busy) throw webdataErrors.scheduleRunInProgress();
  const now = deps.clock.now();
  const [run] = await deps.db.orm
    .insert(webdataScheduleRuns)
    .values({ scheduleId: s.id, slot: now, trigger: 'manual', status: 'processing', startedAt: now })
    .returning();
  await deps.jobs.enqueue(SCHEDULE_RUN_JOB, { runId: run!.id });
  return runOut(run!, s.type);
}

/** The job behind "run now". */
export async function runQueuedRun(deps: Deps, runId: string, signal?: AbortSignal): Promise<void> {
  const [run] = await deps.db.orm.select().from(webdataScheduleRuns).where(eq(webdataScheduleRuns.id, runId));
  if (run?.status !== 'processing') return;
  const [s] = await deps.db.orm
    .select()
    .from(webdataSchedules)
    .where(eq(webdataSchedules.id, run.scheduleId));
  if (!s) return;
  await runOnce(deps, s, run.id, signal);
}

export async function deleteSchedule(deps: Deps, scope: Scope, id: string) {
  await own(deps, scope, id);
  await deps.db.orm.delete(webdataScheduleRuns).where(eq(webdataScheduleRuns.scheduleId, id));
  await deps.db.orm.delete(webdataSchedules).where(eq(webdataSchedules.id, id));
  return { success: true as const };
}

export async function listRuns(deps: Deps, scope: Scope, id: string, q: { limit: number; cursor?: string }) {
  const schedule = await own(deps, scope, id);
  const cursorScope = `webdata.schedule.runs:${id}`;
  const conds: (SQL | undefined)[] = [eq(webdataScheduleRuns.scheduleId, id)];
  if (q.cursor) {
    const k = decodeCursor(deps.keyring, cursorScope, q.cursor, keysetSchema);
    const at = new Date(k.at);
    // (slot, id): a manual run may share its slot's instant with a scheduled one.
    conds.push(
      or(
        lt(webdataScheduleRuns.slot, at),
        and(eq(webdataScheduleRuns.slot, at), lt(webdataScheduleRuns.id, k.id)),
      ),
    );
  }
  const rows = await deps.db.orm
    .select()
    .from(webdataScheduleRuns)
    .where(and(...conds))
    .orderBy(desc(webdataScheduleRuns.slot), desc(webdataScheduleRuns.id))
    .limit(q.limit + 1);
  const page = cursorPage(deps.keyring, cursorScope, rows, q.limit, (r) => ({
    at: r.slot.toISOString(),
    id: r.id,
  }));
  return { items: page.items.map((r) => runOut(r, schedule.type)), nextCursor: page.nextCursor };
}

function runOut(r: RunRow, type: Row['type']) {
  return {
    id: r.id,
    slot: r.slot.toISOString(),
    trigger: r.trigger,
    startedAt: r.startedAt.toISOString(),
    completedAt: r.completedAt?.toISOString() ?? null,
    status: r.status,
    resultId: r.resultId,
    baseline: r.baseline,
    changed: r.changed,
    changeScore: r.changeScore,
    diff: r.diff,
    regions: type === 'screenshot' ? regionsOf(r.diff) : null,
    error: r.error,
  };
}

function regionsOf(diff: string | null) {
  if (!diff) return null;
  try {
    return (JSON.parse(diff) as { regions?: Region[] }).regions ?? null;
  } catch {
    return null;
  }
}

/** Runs every active schedule whose current slot has no run yet; returns how many runs this call made. */
export async function tickSchedules(deps: Deps, opts: { signal?: AbortSignal } = {}): Promise<number> {
  const now = deps.clock.now();
  // A run still `processing` long after it started belongs to a worker that stopped mid-run (a restart or a
  // crash): it is closed as failed so the runs list tells the truth; its slot is not run again.
  await deps.db.orm
    .update(webdataScheduleRuns)
    .set({ status: 'failed', error: 'The run was interrupted (its worker stopped).', completedAt: now })
    .where(
      and(
        eq(webdataScheduleRuns.status, 'processing'),
        lt(webdataScheduleRuns.startedAt, new Date(now.getTime() - STALE_RUN_MS)),
      ),
    );
  const active = await deps.db.orm.select().from(webdataSchedules).where(eq(webdataSchedules.isActive, true));
  let ran = 0;
  for (const s of active) {
    if (opts.signal?.aborted) break;
    const slot = slotOf(s.frequency, now, s.intervalMinutes);
    const [run] = await deps.db.orm
      .insert(webdataScheduleRuns)
      .values({ scheduleId: s.id, slot, status: 'processing', startedAt: now })
      .onConflictDoNothing()
      .returning();
    if (!run) continue;
    ran++;
    await runOnce(deps, s, run.id, opts.signal);
  }
  return ran;
}

async function runOnce(deps: Deps, s: Row, runId: string, signal?: AbortSignal): Promise<void> {
  const scope = { orgId: s.orgId, environment: s.environment };
  let res: Awaited<ReturnType<ReturnType<typeof runnerFor>>>;
  try {
    res = await runnerFor(deps, s.type)(deps, scope, s.url, s.config, { signal });
  } catch (err) {
    res = { resultId: null, ok: false, error: (err as Error).message };
  }
  const patch: Partial<typeof webdataScheduleRuns.$inferInsert> = {
    status: res.ok ? 'completed' : 'failed',
    resultId: res.resultId,
    error: res.error ?? null,
    content: res.content ?? null,
    completedAt: deps.clock.now(),
  };
  if (res.ok && s.detectChanges && res.content != null) {
    const [prev] = await deps.db.orm
      .select({ content: webdataScheduleRuns.content })
      .from(webdataScheduleRuns)
      .where(
        and(
          eq(webdataScheduleRuns.scheduleId, s.id),
          eq(webdataScheduleRuns.status, 'completed'),
          ne(webdataScheduleRuns.id, runId),
        ),
      )
      .orderBy(desc(webdataScheduleRuns.slot))
      .limit(1);
    const c =
      prev?.content == null
        ? null
        : s.type === 'screenshot'
          ? await compareScreenshotAssets(deps, scope, prev.content, res.content)
          : compareText(prev.content, res.content);
    if (!prev) {
      // Nothing completed before (the first run, or every earlier one failed): this run is the baseline
      // the next one compares with. "Unchanged" would be a claim nothing supports, so changed stays null.
      patch.baseline = true;
      patch.changed = null;
      patch.changeScore = null;
    } else if (c) {
      patch.changeScore = c.score;
      patch.changed = c.score > 0 && c.score >= s.changeThreshold;
      patch.diff = c.diff;
    } else {
      patch.changed = false;
      patch.changeScore = 0;
    }
  }
  await deps.db.orm.update(webdataScheduleRuns).set(patch).where(eq(webdataScheduleRuns.id, runId));
  await deps.db.orm
    .update(webdataSchedules)
    .set({ lastRunAt: deps.clock.now() })
    .where(eq(webdataSchedules.id, s.id));
}

/** Changed share of two texts (characters added plus removed over both lengths) and a unified diff. */
export function compareText(before: string, after: string): { score: number; diff: string | null } {
  if (before === after) return { score: 0, diff: null };
  let changed = 0;
  for (const part of diffWords(before, after)) if (part.added || part.removed) changed += part.value.length;
  const score = Math.min(1, changed / Math.max(1, before.length + after.length));
  const patch = createPatch('page', before, after, 'previous run', 'this run');
  return { score: Math.round(score * 10_000) / 10_000, diff: patch.slice(0, MAX_DIFF_CHARS) };
}
