import { closeSharedBrowserPool } from '../../../core/browser/shared.ts';
import { defineArea } from '../../manifest.ts';
import { screenshotJob } from './jobs.ts';
import { webdataScreenshotsV1 } from './v1.ts';

// Web data screenshots as an area of its own until the lead folds it into the webdata manifest
// (src/areas/webdata/index.ts): its routes, its job, its migration set, and the shared Chromium pool's end.

export const webdataScreenshotsArea = defineArea({
  name: 'webdata-screenshots',
  v1: [webdataScreenshotsV1],
  jobs: [screenshotJob],
  migrations: [{ area: 'webdata_screenshots', schema: ['src/areas/webdata/screenshots/tables.ts'] }],
  // After the job workers drained: no page is in use any more.
  stop: async () => closeSharedBrowserPool(),
});
