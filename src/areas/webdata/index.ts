import { createPageRenderer } from '../../core/browser/renderer.ts';
import { closeSharedBrowserPool, sharedBrowserPool } from '../../core/browser/shared.ts';
import type { PayloadOf } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { defineArea } from '../manifest.ts';
import { webdataCatalogue } from './errors.ts';
import {
  getWebCrawlForCli,
  getWebExtractionForCli,
  getWebScreenshotForCli,
  listRecentWebDataForCli,
  startWebCrawlForCli,
  startWebExtractionForCli,
  startWebScreenshotForCli,
} from './fn.ts';
import {
  batchJob,
  crawlJob,
  extractJob,
  SCHEDULE_TICK_CRON,
  SCHEDULE_TICK_JOB,
  scheduleRunJob,
  scheduleTickJob,
} from './jobs.ts';
import { plugInto } from './plugins.ts';
import { screenshotJob } from './screenshots/jobs.ts';
import { webdataScreenshotsV1 } from './screenshots/v1.ts';
import { sweepInterrupted } from './sweep.ts';
import { getWebDataUsageByDayForCli } from './usage-fn.ts';
import { webdataV1 } from './v1.ts';

// Web data: extraction, batch jobs and schedules (both kinds), crawl, map and documents (docs/webdata.md).
// Screenshots (screenshots/) share the area, with a migration set of their own. The browser reaches
// extraction through plugInto (plugins.ts): `pier serve` wires the shared Chromium pool with wireBrowser,
// tests wire what they test.

export const webdataArea = defineArea({
  name: 'webdata',
  errors: [webdataCatalogue],
  fns: [
    startWebExtractionForCli,
    getWebExtractionForCli,
    startWebCrawlForCli,
    getWebCrawlForCli,
    startWebScreenshotForCli,
    getWebScreenshotForCli,
    listRecentWebDataForCli,
    getWebDataUsageByDayForCli,
  ],
  // The dashboard's chart series, not a tool an agent needs.
  notTools: ['getWebDataUsageByDayForCli'],
  v1: [webdataV1, webdataScreenshotsV1],
  jobs: [extractJob, batchJob, crawlJob, scheduleTickJob, scheduleRunJob, screenshotJob],
  schedules: [{ job: SCHEDULE_TICK_JOB, cron: SCHEDULE_TICK_CRON }],
  migrations: [
    { area: 'webdata', schema: ['src/areas/webdata/tables.ts'] },
    { area: 'webdata_screenshots', schema: ['src/areas/webdata/screenshots/tables.ts'] },
  ],
  // Work a stopped worker left `processing` is resumed or failed before this worker takes jobs (sweep.ts).
  onWorkerStart: async (deps) => {
    await sweepInterrupted(deps);
  },
  // After the job workers drained: no page is in use any more.
  stop: async () => closeSharedBrowserPool(),
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'webdata.extract': PayloadOf<typeof extractJob>;
    'webdata.batch': PayloadOf<typeof batchJob>;
    'webdata.crawl': PayloadOf<typeof crawlJob>;
    'webdata.schedules.tick': PayloadOf<typeof scheduleTickJob>;
    'webdata.schedules.run': PayloadOf<typeof scheduleRunJob>;
    'webdata.screenshot': PayloadOf<typeof screenshotJob>;
  }
}

/** Extractions of JavaScript pages and waits render in the process's Chromium pool (started on first use). */
export function wireBrowser(deps: Deps): void {
  plugInto(deps, { renderer: createPageRenderer(sharedBrowserPool(deps.config)) });
}

export { createBatch } from './batches.ts';
export {
  type KindRunner,
  type PageRenderer,
  plugInto,
  type RenderOptions,
  type WebdataPlugins,
} from './plugins.ts';
