import { z } from 'zod';
import { offsetPageSchema } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import { type CdnScope, getAsset, listAssets, listFolders } from './assets.ts';
import { listMerges } from './merge.ts';
import * as S from './schema.ts';
import { ASSET_TYPES, MERGE_STATUSES } from './tables.ts';
import { createTransformUrl } from './transform.ts';
import { confirmUpload, requestUpload } from './uploads.ts';
import { storageUsage } from './usage.ts';

// The dashboard's Assets page and the CLI's `pier cdn` (docs/decisions/042-cdn-dashboard-functions.md):
// personal credentials (session or token) of a member, never an API key. Every function names the
// organization and the environment (production = what live keys see, sandbox = test keys) and calls the CDN
// service the v1 routes use; none has SQL of its own.

const environment = z.enum(['production', 'sandbox']);
const scoped = { orgSlug: slugInput, environment };
const ref = z.string().trim().min(1).max(200);
const projectSlug = z.string().trim().min(1).max(100);

async function open(
  deps: Deps,
  userId: string,
  input: { orgSlug: string; environment: 'production' | 'sandbox' },
): Promise<CdnScope> {
  const { org } = await orgForUser(deps, userId, input.orgSlug);
  return { orgId: org.id, environment: input.environment };
}

/** Thumbnails and previews are signed transform URLs, so the page never downloads an original to shrink it. */
const THUMB = { width: 320, height: 320, fit: 'cover', format: 'webp', quality: 70 } as const;
const PREVIEW = { width: 1200, height: 1200, fit: 'inside', format: 'webp', quality: 80 } as const;

async function imageUrl(deps: Deps, s: CdnScope, a: S.AssetOut, opts: S.TransformOptions) {
  if (a.type !== 'image' || a.status !== 'ready' || a.mimeType === 'image/svg+xml') return null;
  return (await createTransformUrl(deps, s, a.assetId, opts)).url;
}

const assetWithThumb = S.asset.extend({ thumbnailUrl: z.string().nullable() });

export const listCdnAssetsForCli = defineFn({
  name: 'listCdnAssetsForCli',
  summary:
    "Lists an environment's assets, newest first, by folder, type and filename, with thumbnail URLs for images and the folders in use (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    folder: S.folderSchema.optional(),
    type: z.enum(ASSET_TYPES).optional(),
    search: z.string().max(255).optional(),
    limit: z.number().int().min(1).max(100).default(50),
    offset: z.number().int().min(0).max(1_000_000).default(0),
  }),
  output: offsetPageSchema(assetWithThumb).extend({ folders: z.array(z.string()) }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const s = await open(deps, caller.userId, input);
    const page = await listAssets(deps, s, { ...input, sortBy: 'createdAt', sortOrder: 'desc' });
    const items = await Promise.all(
      page.items.map(async (a) => ({ ...a, thumbnailUrl: await imageUrl(deps, s, a, THUMB) })),
    );
    return { ...page, items, folders: await listFolders(deps, s) };
  },
});

export const getCdnAssetForCli = defineFn({
  name: 'getCdnAssetForCli',
  summary: 'One asset with its metadata and, for images, a preview URL (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, assetId: ref }),
  output: S.asset.extend({ previewUrl: z.string().nullable() }),
  errors: ['ORG_NOT_FOUND', 'ASSET_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const s = await open(deps, caller.userId, input);
    const a = await getAsset(deps, s, input.assetId);
    return { ...a, previewUrl: await imageUrl(deps, s, a, PREVIEW) };
  },
});

export const createCdnUploadForCli = defineFn({
  name: 'createCdnUploadForCli',
  summary:
    'As POST /v1/cdn/upload (any member): PUT the file to uploadUrl with uploadHeaders, then confirmCdnUploadForCli.',
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    filename: S.uploadBody.shape.filename,
    mimeType: S.uploadBody.shape.mimeType,
    size: S.uploadBody.shape.size,
    folder: S.folderSchema.optional(),
    projectSlug: projectSlug.optional(),
    resumable: S.uploadBody.shape.resumable,
  }),
  output: S.uploadResponse,
  errors: ['ORG_NOT_FOUND', 'PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const s = await open(deps, caller.userId, input);
    const { orgSlug: _o, environment: _e, ...body } = input;
    return requestUpload(deps, s, body);
  },
});

export const confirmCdnUploadForCli = defineFn({
  name: 'confirmCdnUploadForCli',
  summary: 'Confirms an upload; the bytes are checked as on v1 (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, assetId: ref }),
  output: S.asset,
  errors: [
    'ORG_NOT_FOUND',
    'ASSET_NOT_FOUND',
    'UPLOAD_ALREADY_CONFIRMED',
    'UPLOAD_INCOMPLETE',
    'UPLOAD_EXPIRED',
    'PAYLOAD_TOO_LARGE',
  ],
  handler: async ({ deps, caller }, input) => {
    const s = await open(deps, caller.userId, input);
    return confirmUpload(deps, s, input.assetId);
  },
});

export const getCdnStorageUsageForCli = defineFn({
  name: 'getCdnStorageUsageForCli',
  summary:
    "The organization's storage usage as GET /v1/cdn/usage/storage reports it; without environment, both (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    orgSlug: slugInput,
    environment: environment.optional(),
    projectSlug: projectSlug.optional(),
    folder: S.folderSchema.optional(),
  }),
  output: S.usageReport,
  errors: ['ORG_NOT_FOUND', 'PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug, ...q }) => {
    const { org } = await orgForUser(deps, caller.userId, orgSlug);
    return storageUsage(deps, org.id, q);
  },
});

export const listCdnMergesForCli = defineFn({
  name: 'listCdnMergesForCli',
  summary: "Lists an environment's video merges, newest first, with their progress (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    projectSlug: projectSlug.optional(),
    status: z.enum(MERGE_STATUSES).optional(),
    limit: z.number().int().min(1).max(100).default(20),
    offset: z.number().int().min(0).max(1_000_000).default(0),
  }),
  output: S.mergePage,
  errors: ['ORG_NOT_FOUND', 'PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const s = await open(deps, caller.userId, input);
    return listMerges(deps, s, input);
  },
});

export const cdnDashboardFns = [
  listCdnAssetsForCli,
  getCdnAssetForCli,
  createCdnUploadForCli,
  confirmCdnUploadForCli,
  getCdnStorageUsageForCli,
  listCdnMergesForCli,
];
