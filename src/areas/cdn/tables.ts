import { sql } from 'drizzle-orm';
import {
  bigint,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

// CDN: every row carries its organization and environment (production for live keys, sandbox for test
// keys); every query filters on both. An asset's bytes live in the blob store under `blobKey`; the row is
// the truth about what the bytes are (sniffed at confirm), not the uploader's declaration.

export const ASSET_TYPES = ['image', 'video', 'audio', 'document', 'other'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

/** pending: waiting for the upload and its confirm; ready: verified; failed: undecodable media. */
export const ASSET_STATUSES = ['pending', 'ready', 'failed'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];

/** What ffprobe found in a video or audio file (kept for merges and shown on the asset). */
export type MediaInfo = {
  duration?: number;
  videoCodec?: string;
  audioCodec?: string;
  hasVideo: boolean;
  hasAudio: boolean;
  /** True when the only "video" stream is a still picture (cover art, an image in a video container). */
  stillImage?: boolean;
};

export type UploadChunk = { key: string; size: number };

export const cdnAssets = pgTable(
  'cdn_assets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    /** Optional owning project (checked against the key's organization when given). */
    projectId: uuid('project_id'),
    filename: text('filename').notNull(),
    /** Virtual path without leading or trailing '/', '' for the root. */
    folder: text('folder').notNull().default(''),
    mimeType: text('mime_type').notNull(),
    /** What the uploader said, kept when the sniffed bytes contradicted it. */
    declaredMimeType: text('declared_mime_type').notNull(),
    type: text('type').$type<AssetType>().notNull(),
    /** Declared size until confirm, then the real size of the bytes. */
    size: bigint('size', { mode: 'number' }).notNull(),
    status: text('status').$type<AssetStatus>().notNull(),
    error: text('error'),
    width: integer('width'),
    height: integer('height'),
    duration: doublePrecision('duration'),
    /** Frames of an animated GIF/WebP (null for stills and other types). */
    frames: integer('frames'),
    /** A tiny blurred WebP as a data URL (about 200 bytes), shown while the image loads. */
    placeholder: text('placeholder'),
    media: jsonb('media').$type<MediaInfo>(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /** 'upload' for originals; 'derived' for outputs Pier made (merge results) — storage usage splits on it. */
    origin: text('origin').$type<'upload' | 'derived'>().notNull().default('upload'),
    blobKey: text('blob_key').notNull(),
    uploadExpiresAt: timestamp('upload_expires_at', { withTimezone: true }),
    /** Resumable (tus) uploads only: the bytes received so far; null for a single presigned PUT. */
    uploadOffset: bigint('upload_offset', { mode: 'number' }),
    /** Resumable uploads: the stored pieces in order, joined at confirm. */
    uploadChunks: jsonb('upload_chunks').$type<UploadChunk[]>(),
    confirmedAt: timestamp('confirmed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('cdn_assets_tenant_created_idx').on(t.orgId, t.environment, t.createdAt),
    index('cdn_assets_tenant_folder_idx').on(t.orgId, t.environment, t.folder),
    index('cdn_assets_pending_idx').on(t.uploadExpiresAt).where(sql`status = 'pending'`),
  ],
);

export type AssetRow = typeof cdnAssets.$inferSelect;

/**
 * The on-the-fly transform cache: one row per rendered variant, so the cleanup job can expire them after
 * 90 days (the contract's limit) and an asset's delete can remove its variants. Not counted in storage usage.
 */
export const cdnTransformCache = pgTable(
  'cdn_transform_cache',
  {
    blobKey: text('blob_key').primaryKey(),
    assetId: uuid('asset_id').notNull(),
    orgId: uuid('org_id').notNull(),
    contentType: text('content_type').notNull(),
    size: integer('size').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('cdn_transform_cache_asset_idx').on(t.assetId),
    index('cdn_transform_cache_created_idx').on(t.createdAt),
  ],
);

export const MERGE_STATUSES = [
  'pending',
  'queued',
  'processing',
  'completed',
  'failed',
  'cancelled',
] as const;
export type MergeStatus = (typeof MERGE_STATUSES)[number];

export const cdnMergeJobs = pgTable(
  'cdn_merge_jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    projectId: uuid('project_id').notNull(),
    status: text('status').$type<MergeStatus>().notNull(),
    progress: integer('progress').notNull().default(0),
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    error: text('error'),
    outputAssetId: uuid('output_asset_id'),
    webhookUrl: text('webhook_url'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [index('cdn_merge_jobs_tenant_idx').on(t.orgId, t.environment, t.projectId, t.createdAt)],
);

/** The per-organization secret that signs merge completion webhooks (Standard Webhooks `whsec_…`). */
export const cdnWebhookSecrets = pgTable('cdn_webhook_secrets', {
  orgId: uuid('org_id').primaryKey(),
  secretEnc: text('secret_enc').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  rotatedAt: timestamp('rotated_at', { withTimezone: true }),
});

/** Named transform presets of an organization's environment: `?p=<name>` in a transform URL (decision 120). */
export const cdnPresets = pgTable(
  'cdn_presets',
  {
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    name: text('name').notNull(),
    options: jsonb('options').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.environment, t.name] })],
);

/**
 * Keys an app signs its own transform URLs with (HMAC-SHA-256, as imgproxy). The secret is needed to verify,
 * so it is kept encrypted with the server keyring, never hashed (decision 120).
 */
export const cdnUrlKeys = pgTable(
  'cdn_url_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    label: text('label'),
    secretEnc: text('secret_enc').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('cdn_url_keys_tenant_idx').on(t.orgId, t.environment)],
);

export const VIDEO_KINDS = ['poster', 'thumbnail', 'preview', 'hls'] as const;
export type VideoKind = (typeof VIDEO_KINDS)[number];

/** Poster frames, thumbnails, animated previews and HLS renditions made from a video asset, one row per job. */
export const cdnVideoJobs = pgTable(
  'cdn_video_jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    assetId: uuid('asset_id').notNull(),
    kind: text('kind').$type<VideoKind>().notNull(),
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    status: text('status').$type<'queued' | 'processing' | 'completed' | 'failed'>().notNull(),
    progress: integer('progress').notNull().default(0),
    /** The image, preview or HLS playlist made (segments are derived assets the playlist names). */
    outputAssetId: uuid('output_asset_id'),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [index('cdn_video_jobs_tenant_idx').on(t.orgId, t.environment, t.createdAt)],
);
