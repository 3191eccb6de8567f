import { manifests } from './areas/index.ts';
import type { AreaStop, ScheduleDef } from './areas/manifest.ts';
import type { Deps } from './deps.ts';

/**
 * Starts what runs beside the HTTP server: each area's start (in the list's order), the job queue and,
 * with the worker role, the schedules and the job consumers. Returns a stop function that drains running
 * jobs, then stops the areas in reverse order.
 */
export async function startBackground(
  deps: Deps,
  opts: { worker: boolean; router?: boolean },
): Promise<() => Promise<void>> {
  const started: AreaStop[] = [];
  const ctx = { worker: opts.worker, router: opts.router ?? false };
  for (const area of manifests()) {
    const stop = await area.start?.(deps, ctx);
    if (stop) started.push(stop);
  }
  await deps.jobs.start();
  if (opts.worker) {
    // Schedules live in the database (one row per name), so every worker may (re)state them at start.
    for (const area of manifests()) for (const s of area.schedules ?? []) await stateSchedule(deps, s);
    for (const area of manifests()) await area.onWorkerStart?.(deps);
    await deps.jobs.work();
  }
  return async () => {
    await deps.jobs.stop(deps.config.shutdownGraceMs);
    for (const area of [...manifests()].reverse()) await area.stop?.(deps);
    for (const stop of started.reverse()) await stop();
  };
}

async function stateSchedule(deps: Deps, s: ScheduleDef): Promise<void> {
  if (s.needs && !deps.db.features.has(s.needs)) return;
  const jobs = deps.jobs as unknown as {
    schedule(name: string, cron: string, data: object): Promise<void>;
    unschedule(name: string): Promise<void>;
  };
  const cron = typeof s.cron === 'function' ? s.cron(deps) : s.cron;
  if (cron === null) await jobs.unschedule(s.job);
  else await jobs.schedule(s.job, cron, s.data ?? {});
}
