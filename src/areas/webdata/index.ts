import { defineArea } from '../manifest.ts';
import {
  getWebCrawlForCli,
  getWebExtractionForCli,
  startWebCrawlForCli,
  startWebExtractionForCli,
} from './fn.ts';
import {
  batchJob,
  crawlJob,
  extractJob,
  SCHEDULE_TICK_CRON,
  SCHEDULE_TICK_JOB,
  scheduleTickJob,
} from './jobs.ts';
import { webdataV1 } from './v1.ts';

// Web data: extraction, batch jobs and schedules (both kinds), crawl, map and documents (docs/webdata.md).
// The browser and the screenshot kind are plugged in with plugInto (plugins.ts), not imported.

export const webdataArea = defineArea({
  name: 'webdata',
  fns: [startWebExtractionForCli, getWebExtractionForCli, startWebCrawlForCli, getWebCrawlForCli],
  v1: [webdataV1],
  jobs: [extractJob, batchJob, crawlJob, scheduleTickJob],
  schedules: [{ job: SCHEDULE_TICK_JOB, cron: SCHEDULE_TICK_CRON }],
  migrations: [{ area: 'webdata', schema: ['src/areas/webdata/tables.ts'] }],
});

export { createBatch } from './batches.ts';
export {
  type KindRunner,
  type PageRenderer,
  plugInto,
  type RenderOptions,
  type WebdataPlugins,
} from './plugins.ts';
