import { and, desc, eq, gt, isNull, lt, or } from 'drizzle-orm';
import type { Deps } from '../../../deps.ts';
import { appLogs, type LogPhase } from './tables.ts';

// Apps' stdout/stderr, kept in the database so any API node can answer getAppLogsForCli. Lines are buffered
// and written in batches (a chatty app costs one insert per flush, not one per line).

export type LogStream = 'stdout' | 'stderr' | 'system';
const MAX_LINE = 4000;
const KEEP_PER_PROJECT = 5000;

export class AppLogWriter {
  readonly #deps: Deps;
  #buffer: (typeof appLogs.$inferInsert)[] = [];
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();
  readonly #touched = new Set<string>();
  #trimTimer: NodeJS.Timeout;

  constructor(deps: Deps) {
    this.#deps = deps;
    this.#trimTimer = setInterval(() => void this.#trim(), 60_000);
    this.#trimTimer.unref();
  }

  write(
    projectId: string,
    deploymentId: string | null,
    stream: LogStream,
    line: string,
    phase: LogPhase = 'runtime',
  ): void {
    this.#buffer.push({
      projectId,
      deploymentId,
      stream,
      phase,
      ts: new Date(),
      line: line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line,
    });
    this.#touched.add(projectId);
    if (this.#buffer.length >= 500) void this.flush();
    else if (!this.#timer) this.#timer = setTimeout(() => void this.flush(), 200);
  }

  /** Writes what is buffered; lines of a project that was just deleted are dropped. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#buffer;
    this.#buffer = [];
    this.#flushing = this.#flushing.then(async () => {
      if (!batch.length) return;
      await this.#deps.db.orm
        .insert(appLogs)
        .values(batch)
        .catch(() => {});
    });
    return this.#flushing;
  }

  async #trim(): Promise<void> {
    const ids = [...this.#touched];
    this.#touched.clear();
    for (const projectId of ids) {
      await this.#deps.db
        .query(
          `delete from app_logs where project_id = $1 and id < (
             select coalesce(min(id), 0) from (select id from app_logs where project_id = $1 order by id desc limit ${KEEP_PER_PROJECT}) k)`,
          [projectId],
        )
        .catch(() => {});
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#trimTimer);
    await this.flush();
  }
}

/** The newest `limit` lines (after `since` when given), returned oldest first. */
export async function readAppLogs(
  deps: Deps,
  projectId: string,
  opts: { limit: number; since?: Date; afterId?: number; deploymentId?: string; phase?: LogPhase },
) {
  const conds = [eq(appLogs.projectId, projectId)];
  if (opts.since) conds.push(gt(appLogs.ts, opts.since));
  if (opts.afterId) conds.push(gt(appLogs.id, opts.afterId));
  if (opts.deploymentId) conds.push(eq(appLogs.deploymentId, opts.deploymentId));
  // Lines written before phases were recorded count as the app's own.
  if (opts.phase === 'build') conds.push(eq(appLogs.phase, 'build'));
  if (opts.phase === 'runtime') conds.push(or(isNull(appLogs.phase), eq(appLogs.phase, 'runtime'))!);
  const rows = await deps.db.orm
    .select()
    .from(appLogs)
    .where(and(...conds))
    .orderBy(desc(appLogs.id))
    .limit(opts.limit);
  return rows.reverse();
}

export async function deleteAppLogs(deps: Deps, projectId: string, beforeId?: number): Promise<void> {
  await deps.db.orm
    .delete(appLogs)
    .where(
      beforeId
        ? and(eq(appLogs.projectId, projectId), lt(appLogs.id, beforeId))
        : eq(appLogs.projectId, projectId),
    );
}
