import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import { cdnDashboardFns } from './dashboard-fn.ts';
import { cdnDeliveryRoutes } from './delivery.ts';
import { cdnCatalogue } from './errors.ts';
import { CDN_CLEANUP_CRON, CDN_CLEANUP_JOB, cdnCleanupJob, cdnMergeJob, cdnVideoJob } from './jobs.ts';
import { getCdnUsageByDayForCli } from './usage-fn.ts';
import { cdnV1 } from './v1.ts';
import { getWebhookSecretForCli, rotateWebhookSecretForCli } from './webhook-secret-fn.ts';

// The CDN: presigned uploads verified at confirm, assets, public delivery under {base}/cdn, storage usage,
// image transforms and video merges (docs/cdn.md). What other areas may use — storing bytes they produced
// (web data's screenshots, workflows' outputs) as assets — is exported below and nowhere else.

export const cdnArea = defineArea({
  name: 'cdn',
  errors: [cdnCatalogue],
  fns: [getWebhookSecretForCli, rotateWebhookSecretForCli, ...cdnDashboardFns, getCdnUsageByDayForCli],
  notTools: ['getCdnUsageByDayForCli'],
  v1: [cdnV1],
  http: cdnDeliveryRoutes,
  jobs: [cdnCleanupJob, cdnMergeJob, cdnVideoJob],
  schedules: [{ job: CDN_CLEANUP_JOB, cron: CDN_CLEANUP_CRON }],
  migrations: [{ area: 'cdn', schema: ['src/areas/cdn/tables.ts'] }],
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'cdn.cleanup': PayloadOf<typeof cdnCleanupJob>;
    'cdn.video.merge': PayloadOf<typeof cdnMergeJob>;
    'cdn.video.rendition': PayloadOf<typeof cdnVideoJob>;
  }
}

export type { CdnScope } from './assets.ts';
export { deleteAssets, getAsset, readAssetBytes } from './assets.ts';
export type { AssetOut } from './schema.ts';
export { type StoreAssetInput, storeAsset } from './uploads.ts';
