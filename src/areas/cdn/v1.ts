import { defineArea, defineRoute, type V1Context } from '../../v1/kit.ts';
import * as assets from './assets.ts';
import * as S from './schema.ts';
import { createTransformUrl } from './transform.ts';
import { confirmUpload, requestUpload } from './uploads.ts';
import { storageUsage } from './usage.ts';

// HTTP only: each CDN operation's zod contract and a call into the service. The v1 plugin does auth (API
// keys), rate limits, idempotency and the OpenAPI document. Mounted at /v1/cdn.

const scope = (c: V1Context) => ({ orgId: c.caller.orgId, environment: c.caller.environment });
const NF = 'ASSET_NOT_FOUND';

export const cdnV1 = defineArea({
  name: 'cdn',
  prefix: '/cdn',
  routes: [
    defineRoute({
      method: 'POST',
      url: '/upload',
      name: 'cdn.upload',
      summary: 'Request a presigned upload URL',
      description: 'PUT the file to uploadUrl (with uploadHeaders), then confirm. At most 100 MB.',
      body: S.uploadBody,
      response: S.uploadResponse,
      errors: ['PROJECT_NOT_FOUND'],
      handler: (c, { body }) => requestUpload(c.deps, scope(c), body),
    }),
    defineRoute({
      method: 'POST',
      url: '/upload/:id/confirm',
      name: 'cdn.upload.confirm',
      summary: 'Confirm an upload; the bytes are checked',
      params: S.assetParams,
      response: S.asset,
      errors: [NF, 'UPLOAD_ALREADY_CONFIRMED', 'UPLOAD_INCOMPLETE', 'UPLOAD_EXPIRED', 'PAYLOAD_TOO_LARGE'],
      handler: (c, { params }) => confirmUpload(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/assets/:id',
      name: 'cdn.assets.get',
      summary: 'Get an asset',
      params: S.assetParams,
      response: S.asset,
      errors: [NF],
      handler: (c, { params }) => assets.getAsset(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/assets',
      name: 'cdn.assets.list',
      summary: 'List assets',
      query: S.listQuery,
      response: S.assetPage,
      errors: [],
      handler: (c, { query }) => assets.listAssets(c.deps, scope(c), query),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/assets/:id',
      name: 'cdn.assets.update',
      summary: "Update an asset's metadata",
      params: S.assetParams,
      body: S.patchBody,
      response: S.asset,
      errors: [NF],
      handler: (c, { params, body }) => assets.patchAsset(c.deps, scope(c), params.id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/assets/:id',
      name: 'cdn.assets.delete',
      summary: 'Delete an asset',
      params: S.assetParams,
      response: S.successResponse,
      errors: [NF],
      handler: (c, { params }) => assets.deleteAsset(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/assets/delete',
      name: 'cdn.assets.deleteMany',
      summary: 'Delete several assets',
      body: S.deleteManyBody,
      response: S.deleteManyResponse,
      errors: [],
      handler: (c, { body }) => assets.deleteAssets(c.deps, scope(c), body.assetIds),
    }),
    defineRoute({
      method: 'POST',
      url: '/assets/move',
      name: 'cdn.assets.move',
      summary: 'Move assets to another folder',
      body: S.moveBody,
      response: S.moveResponse,
      errors: [],
      handler: (c, { body }) => assets.moveAssets(c.deps, scope(c), body.assetIds, body.folder),
    }),
    defineRoute({
      method: 'GET',
      url: '/usage/storage',
      name: 'cdn.usage.storage',
      summary: 'Storage usage',
      description: "Both environments of the key's organization unless `environment` is given.",
      query: S.usageQuery,
      response: S.usageReport,
      errors: ['PROJECT_NOT_FOUND'],
      handler: (c, { query }) => storageUsage(c.deps, c.caller.orgId, query),
    }),
    defineRoute({
      method: 'POST',
      url: '/transform',
      name: 'cdn.transform',
      summary: 'Get a signed URL of a transformed image',
      body: S.transformBody,
      response: S.transformResponse,
      errors: [NF, 'ASSET_NOT_READY', 'ASSET_NOT_IMAGE'],
      handler: (c, { body }) => createTransformUrl(c.deps, scope(c), body.assetId, body.options),
    }),
  ],
});
