import { defineRoute, defineV1Routes, type V1Context } from '../../../http/v1-kit.ts';
import * as S from './schema.ts';
import { createScreenshot, deleteScreenshot, getScreenshot, listScreenshots } from './screenshots.ts';

// HTTP only: the screenshot operations of the Web data contract, mounted at /v1/webdata/screenshots.

const scope = (c: V1Context) => ({ orgId: c.caller.orgId, environment: c.caller.environment });
const NF = 'SCREENSHOT_NOT_FOUND';

export const webdataScreenshotsV1 = defineV1Routes({
  name: 'webdata.screenshots',
  prefix: '/webdata/screenshots',
  routes: [
    defineRoute({
      method: 'POST',
      url: '',
      name: 'webdata.screenshots.create',
      summary: 'Take a screenshot of a page',
      description:
        'Queued; poll GET /webdata/screenshots/{id}. The image is stored as a CDN asset (imageUrl). Requests of the page go through the SSRF guard.',
      body: S.createBody,
      response: S.createResponse,
      errors: [],
      handler: async (c, { body }) => {
        const out = await createScreenshot(c.deps, scope(c), body);
        return { id: out.id, status: out.status };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/:id',
      name: 'webdata.screenshots.get',
      summary: 'Get a screenshot',
      params: S.idParams,
      response: S.screenshot,
      errors: [NF],
      handler: (c, { params }) => getScreenshot(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '',
      name: 'webdata.screenshots.list',
      summary: 'List screenshots',
      query: S.listQuery,
      response: S.screenshotPage,
      errors: ['INVALID_CURSOR'],
      handler: (c, { query }) => listScreenshots(c.deps, scope(c), query),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/:id',
      name: 'webdata.screenshots.delete',
      summary: 'Delete a screenshot and its image',
      params: S.idParams,
      response: S.successResponse,
      errors: [NF],
      handler: (c, { params }) => deleteScreenshot(c.deps, scope(c), params.id),
    }),
  ],
});
