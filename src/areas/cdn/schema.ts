import { z } from 'zod';
import { offsetPageSchema, offsetQuery } from '../../core/pagination.ts';
import { ASSET_STATUSES, ASSET_TYPES, MERGE_STATUSES } from './tables.ts';

// The CDN section of the v1 contract, one schema per operation. Limits are the contract's: uploads up to
// 100 MB, list pages 50 by default and 100 at most, transforms within 4096 px, quality 1–100, blur 0.3–1000.

export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
/** Resumable (tus) uploads may be larger: pieces are stored as they arrive and joined at confirm. */
export const MAX_RESUMABLE_BYTES = 2 * 1024 * 1024 * 1024;

/** A virtual path: segments of letters, digits, space, '.', '_' and '-', separated by '/'. */
export const folderSchema = z
  .string()
  .max(255)
  .transform((s) => s.trim().replace(/^\/+|\/+$/g, ''))
  .refine(
    (s) => s === '' || s.split('/').every((seg) => /^[\w .-]+$/.test(seg) && seg !== '.' && seg !== '..'),
    'folder must be a path of letters, digits, spaces, ".", "_" and "-" separated by "/"',
  );

const filenameSchema = z
  .string()
  .min(1)
  .max(255)
  .refine((s) => !/[/\\\0]/.test(s) && s.trim() !== '', 'filename must not contain "/", "\\" or NUL');

const mimeSchema = z
  .string()
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+$/, 'mimeType must look like type/subtype')
  .transform((s) => s.toLowerCase());

const metadataSchema = z
  .record(z.string().max(100), z.unknown())
  .refine((m) => JSON.stringify(m).length <= 16_384, 'metadata must be at most 16 KB of JSON');

export const uploadBody = z.object({
  filename: filenameSchema,
  mimeType: mimeSchema,
  size: z.number().int().min(1).max(MAX_RESUMABLE_BYTES),
  folder: folderSchema.optional(),
  metadata: metadataSchema.optional(),
  /** Pier's extension: the project the asset belongs to (counted in its storage usage). */
  projectSlug: z.string().min(1).max(100).optional(),
  /** Pier's extension: a tus 1.0 URL (HEAD/PATCH, resumable) instead of a PUT; size up to 2 GiB. */
  resumable: z.boolean().optional(),
});
export type UploadBody = z.infer<typeof uploadBody>;

export const uploadResponse = z.object({
  uploadUrl: z.string(),
  /** Headers the PUT must carry (the signed content type). */
  uploadHeaders: z.record(z.string(), z.string()),
  assetId: z.string(),
  cdnUrl: z.string(),
  expiresAt: z.string(),
});

export const asset = z.object({
  assetId: z.string(),
  filename: z.string(),
  folder: z.string(),
  mimeType: z.string(),
  declaredMimeType: z.string(),
  type: z.enum(ASSET_TYPES),
  size: z.number(),
  status: z.enum(ASSET_STATUSES),
  error: z.string().nullable(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  duration: z.number().nullable(),
  /** Pier: frames of an animated GIF/WebP, null for stills. */
  frames: z.number().nullable(),
  /** Pier: a tiny blurred WebP data URL of an image (LQIP), null for other types. */
  placeholder: z.string().nullable(),
  videoCodec: z.string().nullable(),
  audioCodec: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  projectSlug: z.string().nullable(),
  cdnUrl: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  confirmedAt: z.string().nullable(),
});
export type AssetOut = z.infer<typeof asset>;

export const assetParams = z.object({ id: z.string().min(1).max(200) });

export const listQuery = offsetQuery({ defaultLimit: 50, maxLimit: 100 }).extend({
  folder: folderSchema.optional(),
  type: z.enum(ASSET_TYPES).optional(),
  search: z.string().max(255).optional(),
  sortBy: z.enum(['createdAt', 'filename', 'size']).default('createdAt'),
  sortOrder: z.enum(['asc', 'desc']).default('desc'),
});
export type ListQuery = z.infer<typeof listQuery>;
export const assetPage = offsetPageSchema(asset);

export const patchBody = z
  .object({
    /** Replaces the asset's metadata object. */
    metadata: metadataSchema.optional(),
    filename: filenameSchema.optional(),
    folder: folderSchema.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of metadata, filename, folder');

const assetIds = z.array(z.string().min(1).max(200)).min(1).max(100);
export const deleteManyBody = z.object({ assetIds });
export const deleteManyResponse = z.object({
  success: z.literal(true),
  deleted: z.number().int(),
  /** Ids that were not found (or belong to someone else); nothing happened to them. */
  notFound: z.array(z.string()),
});
export const moveBody = z.object({ assetIds, folder: folderSchema });
export const moveResponse = z.object({
  success: z.literal(true),
  moved: z.number().int(),
  notFound: z.array(z.string()),
});
export const successResponse = z.object({ success: z.literal(true) });

const bytesStat = z.object({ bytes: z.number(), bytesFormatted: z.string(), objectCount: z.number() });
export const usageQuery = z.object({
  projectSlug: z.string().min(1).max(100).optional(),
  folder: folderSchema.optional(),
  environment: z.enum(['sandbox', 'production']).optional(),
});
export const usageReport = z.object({
  totalBytes: z.number(),
  totalFormatted: z.string(),
  objectCount: z.number(),
  byType: z.record(z.string(), bytesStat),
  breakdown: z.object({ originals: bytesStat, derived: bytesStat }),
  unmeasuredAssets: z.number(),
  folder: z.string().nullable(),
  projectSlug: z.string().nullable(),
  environment: z.enum(['sandbox', 'production']).nullable(),
});

const GRAVITIES = [
  'center',
  'north',
  'northeast',
  'east',
  'southeast',
  'south',
  'southwest',
  'west',
  'northwest',
] as const;
/** Pier's extensions past the contract's options (docs/cdn.md "Transform options"). */
export const transformOptions = z
  .object({
    width: z.number().int().min(1).max(4096).optional(),
    height: z.number().int().min(1).max(4096).optional(),
    fit: z.enum(['cover', 'contain', 'fill', 'inside', 'outside']).optional(),
    format: z.enum(['auto', 'jpeg', 'webp', 'avif', 'png', 'gif']).optional(),
    quality: z.number().int().min(1).max(100).optional(),
    blur: z.number().min(0.3).max(1000).optional(),
    grayscale: z.boolean().optional(),
    /** Where `cover` crops: a compass point, or `attention` (smart crop: the salient region) / `entropy`. */
    gravity: z.enum([...GRAVITIES, 'attention', 'entropy']).optional(),
    /** Device pixel ratio: width, height and padding are multiplied (the result stays within 4096 px). */
    dpr: z.number().min(1).max(4).optional(),
    sharpen: z.number().min(0.3).max(10).optional(),
    /** `rrggbb` or `rrggbbaa`: letterbox of `contain`, padding, and what transparency becomes in JPEG. */
    background: z
      .string()
      .regex(/^[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/, 'background must be rrggbb or rrggbbaa hex')
      .optional(),
    /** Pixels of background added on every side, after the resize. */
    pad: z.number().int().min(1).max(1000).optional(),
    /** Text drawn over the picture (white on a translucent band). */
    watermarkText: z.string().min(1).max(100).optional(),
    /** An image asset of the same organization environment drawn over the picture (its alpha kept). */
    watermarkAsset: z.string().uuid().optional(),
    watermarkPosition: z.enum(GRAVITIES).optional(),
    watermarkOpacity: z.number().min(0.05).max(1).optional(),
    /** The mark's width as a share of the output's width (default 0.25). */
    watermarkScale: z.number().min(0.05).max(1).optional(),
  })
  .strict();
export type TransformOptions = z.infer<typeof transformOptions>;

/** A preset's name: what goes in `?p=` (decision 120). */
export const presetName = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[a-z0-9][a-z0-9_-]{0,63}$/,
    'a preset name is 1–64 of a–z, 0–9, "_" and "-", starting alphanumeric',
  );
/** What a transform may ask for: options, a preset, or a preset with options that override it. */
export const transformRequestOptions = transformOptions.extend({ preset: presetName.optional() }).strict();
export type TransformRequestOptions = z.infer<typeof transformRequestOptions>;
export const transformBody = z.object({
  assetId: z.string().min(1).max(200),
  options: transformRequestOptions.default({}),
});
export const transformResponse = z.object({
  url: z.string(),
  assetId: z.string(),
  options: transformRequestOptions,
});

// Presets and URL-signing keys.
export const presetParams = z.object({ name: presetName });
export const presetBody = z.object({ options: transformOptions });
export const preset = z.object({
  name: z.string(),
  options: transformOptions,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const presetList = z.object({ items: z.array(preset) });
export const urlKeyParams = z.object({ keyId: z.string().min(1).max(200) });
export const urlKeyBody = z.object({ label: z.string().min(1).max(100).optional() });
export const urlKey = z.object({ keyId: z.string(), label: z.string().nullable(), createdAt: z.string() });
export const urlKeyCreated = urlKey.extend({
  /** Shown once: Pier keeps it encrypted and never answers it again. */
  secret: z.string(),
});
export const urlKeyList = z.object({ items: z.array(urlKey) });

// Video merges.
const seconds = z.number().min(0);
export const mergeInput = z
  .object({
    assetId: z.string().uuid(),
    duration: z.number().gt(0).max(3600).optional(),
    startTime: seconds.optional(),
    endTime: seconds.optional(),
  })
  .refine((i) => i.startTime === undefined || i.endTime === undefined || i.endTime > i.startTime, {
    message: 'endTime must be after startTime',
  });
export const mergeBody = z.object({
  projectSlug: z.string().min(1).max(100),
  inputs: z.array(mergeInput).min(1).max(100),
  audioTrack: z
    .object({
      assetId: z.string().uuid(),
      loop: z.boolean().default(false),
      fadeIn: z.number().min(0).max(10).default(0),
      fadeOut: z.number().min(0).max(10).default(0),
    })
    .optional(),
  output: z
    .object({
      format: z.enum(['mp4', 'webm']).default('mp4'),
      quality: z.enum(['360p', '480p', '720p', '1080p', '1440p', '2160p']).default('720p'),
      aspectRatio: z.enum(['auto', '16:9', '9:16', '1:1']).default('auto'),
      filename: z.string().min(1).max(255).optional(),
    })
    .default({ format: 'mp4', quality: '720p', aspectRatio: 'auto' }),
  webhookUrl: z
    .string()
    .url()
    .max(2048)
    .refine((u) => /^https?:\/\//i.test(u), 'webhookUrl must be an http(s) URL')
    .optional(),
});
export type MergeBody = z.infer<typeof mergeBody>;

export const mergeJob = z.object({
  id: z.string(),
  status: z.enum(MERGE_STATUSES),
  progress: z.number(),
  projectSlug: z.string(),
  outputAsset: z
    .object({ assetId: z.string(), cdnUrl: z.string(), duration: z.number().nullable(), size: z.number() })
    .nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
});
export type MergeJobOut = z.infer<typeof mergeJob>;
export const mergeParams = z.object({ jobId: z.string().min(1).max(200) });
export const mergeListQuery = offsetQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
  projectSlug: z.string().min(1).max(100),
  status: z.enum(MERGE_STATUSES).optional(),
});
export const mergePage = offsetPageSchema(mergeJob);

// Video renditions (poster, thumbnail, animated preview, HLS) as jobs.
export const videoJobBody = z
  .object({
    assetId: z.string().uuid(),
    kind: z.enum(['poster', 'thumbnail', 'preview', 'hls']),
    /** Seconds into the video: the frame of a poster/thumbnail, the start of a preview (default: 10 % in). */
    at: z.number().min(0).max(86_400).optional(),
    /** Output width in pixels for thumbnail and preview (default 320; the poster keeps the video's size). */
    width: z.number().int().min(16).max(1920).optional(),
    /** Length of an animated preview in seconds (default 3). */
    duration: z.number().gt(0).max(10).optional(),
  })
  .strict();
export type VideoJobBody = z.infer<typeof videoJobBody>;
export const videoJob = z.object({
  id: z.string(),
  assetId: z.string(),
  kind: z.enum(['poster', 'thumbnail', 'preview', 'hls']),
  status: z.enum(['queued', 'processing', 'completed', 'failed']),
  progress: z.number(),
  /** The image, animated WebP or HLS playlist (`.m3u8`, its segments beside it under /cdn). */
  outputAsset: z
    .object({ assetId: z.string(), cdnUrl: z.string(), mimeType: z.string(), size: z.number() })
    .nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
});
export type VideoJobOut = z.infer<typeof videoJob>;
