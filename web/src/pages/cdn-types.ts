// Types and small helpers of the Assets page.
import type { FnInput, FnOutput } from '../../../src/sdk/types.ts';

// The CDN functions' answers, typed from the server's own schemas (src/areas/cdn/dashboard-fn.ts) through
// the SDK, so the page cannot drift from what the server sends.

export type Env = FnInput<'listCdnAssetsForCli'>['environment'];
export type CdnScope = { orgSlug: string; environment: Env };

export type AssetPage = FnOutput<'listCdnAssetsForCli'>;
export type Asset = FnOutput<'confirmCdnUploadForCli'>;
export type AssetWithPreview = FnOutput<'getCdnAssetForCli'>;
export type Usage = FnOutput<'getCdnStorageUsageForCli'>;
export type MergePage = FnOutput<'listCdnMergesForCli'>;

export const ASSET_TYPES = ['image', 'video', 'audio', 'document', 'other'] as const;

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = -1;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}
