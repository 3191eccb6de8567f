import { createPatch, diffWords } from 'diff';
import { and, desc, eq, lt, ne } from 'drizzle-orm';
import { isUuid } from '../../core/ids.ts';
import { cursorPage, decodeCursor, keysetSchema } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { checkConfig, runnerFor } from './batches.ts';
import { webdataErrors } from './errors.ts';
import type { Scope } from './extractions.ts';
import type { ScheduleBody } from './schema.ts';
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
export const DEFAULT_CHANGE_THRESHOLD = 0.05;
const MAX_DIFF_CHARS = 20_000;
const STALE_RUN_MS = 3600_000;

type Row = typeof webdataSchedules.$inferSelect;

export function slotOf(frequency: ScheduleFrequency, now: Date): Date {
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
  config: s.config,
  detectChanges: s.detectChanges,
  changeThreshold: s.changeThreshold,
  isActive: s.isActive,
  lastRunAt: s.lastRunAt?.toISOString() ?? null,
  createdAt: s.createdAt.toISOString(),
});

const mine = (scope: Scope) =>
  and(eq(webdataSchedules.orgId, scope.orgId), eq(webdataSchedules.environment, scope.environment));

export async function createSchedule(deps: Deps, scope: Scope, body: ScheduleBody) {
  const config = checkConfig(body.type, body.config ?? {});
  const [row] = await deps.db.orm
    .insert(webdataSchedules)
    .values({
      ...scope,
      name: body.name,
      url: body.url,
      type: body.type,
      frequency: body.frequency,
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

export async function toggleSchedule(deps: Deps, scope: Scope, id: string) {
  const row = await own(deps, scope, id);
  const [done] = await deps.db.orm
    .update(webdataSchedules)
    .set({ isActive: !row.isActive })
    .where(eq(webdataSchedules.id, id))
    .returning({ isActive: webdataSchedules.isActive });
  return { isActive: done!.isActive };
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
  const conds = [eq(webdataScheduleRuns.scheduleId, id)];
  if (q.cursor) {
    const k = decodeCursor(deps.keyring, cursorScope, q.cursor, keysetSchema);
    conds.push(lt(webdataScheduleRuns.slot, new Date(k.at)));
  }
  const rows = await deps.db.orm
    .select()
    .from(webdataScheduleRuns)
    .where(and(...conds))
    .orderBy(desc(webdataScheduleRuns.slot))
    .limit(q.limit + 1);
  const page = cursorPage(deps.keyring, cursorScope, rows, q.limit, (r) => ({
    at: r.slot.toISOString(),
    id: r.id,
  }));
  return {
    items: page.items.map((r) => ({
      id: r.id,
      slot: r.slot.toISOString(),
      startedAt: r.startedAt.toISOString(),
      completedAt: r.completedAt?.toISOString() ?? null,
      status: r.status,
      resultId: r.resultId,
      changed: r.changed,
      changeScore: r.changeScore,
      diff: r.diff,
      regions: schedule.type === 'screenshot' ? regionsOf(r.diff) : null,
      error: r.error,
    })),
    nextCursor: page.nextCursor,
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
    const slot = slotOf(s.frequency, now);
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
    if (c) {
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
