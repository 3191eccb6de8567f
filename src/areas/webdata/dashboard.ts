import { and, desc, eq, inArray } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import type { Scope } from './extractions.ts';
import { webdataScreenshots } from './screenshots/tables.ts';
import {
  webdataBatches,
  webdataCrawls,
  webdataExtractions,
  webdataScheduleRuns,
  webdataSchedules,
} from './tables.ts';

// The dashboard's "Web data" page in one read: the newest extractions, crawls, batch jobs, schedules (with
// their last run's change) and screenshots of one environment. Each list is short (RECENT) — the page shows what is
// going on now; the v1 API lists everything.

const RECENT = 20;
const iso = (d: Date | null) => d?.toISOString() ?? null;

export async function recentWebData(deps: Deps, s: Scope) {
  const db = deps.db.orm;
  const [extractions, crawls, batches, schedules, shots] = await Promise.all([
    db
      .select({
        id: webdataExtractions.id,
        url: webdataExtractions.url,
        mode: webdataExtractions.mode,
        status: webdataExtractions.status,
        fetchedWith: webdataExtractions.fetchedWith,
        error: webdataExtractions.error,
        createdAt: webdataExtractions.createdAt,
      })
      .from(webdataExtractions)
      .where(and(eq(webdataExtractions.orgId, s.orgId), eq(webdataExtractions.environment, s.environment)))
      .orderBy(desc(webdataExtractions.createdAt))
      .limit(RECENT),
    db
      .select()
      .from(webdataCrawls)
      .where(and(eq(webdataCrawls.orgId, s.orgId), eq(webdataCrawls.environment, s.environment)))
      .orderBy(desc(webdataCrawls.createdAt))
      .limit(RECENT),
    db
      .select()
      .from(webdataBatches)
      .where(and(eq(webdataBatches.orgId, s.orgId), eq(webdataBatches.environment, s.environment)))
      .orderBy(desc(webdataBatches.createdAt))
      .limit(RECENT),
    db
      .select()
      .from(webdataSchedules)
      .where(and(eq(webdataSchedules.orgId, s.orgId), eq(webdataSchedules.environment, s.environment)))
      .orderBy(desc(webdataSchedules.createdAt))
      .limit(RECENT),
    db
      .select()
      .from(webdataScreenshots)
      .where(and(eq(webdataScreenshots.orgId, s.orgId), eq(webdataScreenshots.environment, s.environment)))
      .orderBy(desc(webdataScreenshots.createdAt))
      .limit(RECENT),
  ]);
  const runs = schedules.length
    ? await db
        .select()
        .from(webdataScheduleRuns)
        .where(
          inArray(
            webdataScheduleRuns.scheduleId,
            schedules.map((x) => x.id),
          ),
        )
        .orderBy(desc(webdataScheduleRuns.slot))
    : [];
  const lastRun = new Map<string, (typeof runs)[number]>();
  for (const r of runs) if (!lastRun.has(r.scheduleId)) lastRun.set(r.scheduleId, r);
  return {
    extractions: extractions.map((x) => ({ ...x, createdAt: x.createdAt.toISOString() })),
    crawls: crawls.map((c) => ({
      id: c.id,
      url: c.url,
      status: c.status,
      pagesCrawled: c.pagesCrawled,
      pagesQueued: c.pagesQueued,
      maxPages: c.options.maxPages,
      error: c.error,
      createdAt: c.createdAt.toISOString(),
    })),
    batches: batches.map((b) => ({
      id: b.id,
      type: b.type,
      status: b.status,
      totalUrls: b.totalUrls,
      processedUrls: b.processedUrls,
      failedUrls: b.failedUrls,
      createdAt: b.createdAt.toISOString(),
    })),
    schedules: schedules.map((x) => {
      const r = lastRun.get(x.id);
      return {
        id: x.id,
        name: x.name,
        url: x.url,
        type: x.type,
        frequency: x.frequency,
        isActive: x.isActive,
        lastRun: r
          ? {
              status: r.status,
              startedAt: r.startedAt.toISOString(),
              changed: r.changed,
              changeScore: r.changeScore,
              baseline: r.baseline,
              error: r.error,
            }
          : null,
      };
    }),
    screenshots: shots.map((x) => ({
      id: x.id,
      url: x.url,
      status: x.status,
      format: x.format,
      imageUrl: x.imageUrl,
      imageWidth: x.imageWidth,
      imageHeight: x.imageHeight,
      error: x.error,
      createdAt: x.createdAt.toISOString(),
    })),
    at: iso(deps.clock.now()),
  };
}
