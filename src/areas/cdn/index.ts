// The CDN area: presigned uploads verified at confirm, assets, public delivery under /cdn, storage usage,
// image transforms and video merges. What other areas may use (web data's screenshots, workflows' outputs)
// is exported here and nowhere else — see docs/cdn.md.

export type { CdnScope } from './assets.ts';
export { getAsset } from './assets.ts';
export { cdnDeliveryRoutes } from './delivery.ts';
export type { AssetOut } from './schema.ts';
export { type StoreAssetInput, storeAsset } from './uploads.ts';
export { cdnV1 } from './v1.ts';
