// Shapes of the CDN functions' answers (src/areas/cdn/dashboard-fn.ts) as the Assets page uses them.

export type Env = 'production' | 'sandbox';
export type CdnScope = { orgSlug: string; environment: Env };

export type Asset = {
  assetId: string;
  filename: string;
  folder: string;
  mimeType: string;
  declaredMimeType: string;
  type: string;
  size: number;
  status: 'pending' | 'ready' | 'failed';
  error: string | null;
  width: number | null;
  height: number | null;
  duration: number | null;
  videoCodec: string | null;
  audioCodec: string | null;
  metadata: Record<string, unknown>;
  projectSlug: string | null;
  cdnUrl: string;
  createdAt: string;
  confirmedAt: string | null;
};

export type AssetPage = {
  items: (Asset & { thumbnailUrl: string | null })[];
  total: number;
  hasMore: boolean;
  folders: string[];
};

export type Stat = { bytes: number; bytesFormatted: string; objectCount: number };
export type Usage = {
  totalBytes: number;
  totalFormatted: string;
  objectCount: number;
  byType: Record<string, Stat>;
  breakdown: { originals: Stat; derived: Stat };
};

export type Merge = {
  id: string;
  status: 'pending' | 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';
  progress: number;
  projectSlug: string;
  outputAsset: { assetId: string; cdnUrl: string; duration: number | null; size: number } | null;
  error: string | null;
  createdAt: string;
};

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
