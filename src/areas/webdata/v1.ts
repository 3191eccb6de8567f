import { z } from 'zod';
import type { ErrorCode } from '../../core/errors.ts';
import { defineRoute, defineV1Routes, idParams, type V1Context } from '../../http/v1-kit.ts';
import { cancelBatch, createBatch, getBatch } from './batches.ts';
import { cancelCrawl, createCrawl, getCrawl, listCrawlPages } from './crawls.ts';
import { parseDocumentAt } from './documents.ts';
import { createExtraction, deleteExtraction, getExtraction, listExtractions } from './extractions.ts';
import { asApiError } from './fetch-page.ts';
import { mapSite } from './map.ts';
import { createSchedule, deleteSchedule, getSchedule, listRuns, toggleSchedule } from './schedules.ts';
import * as S from './schema.ts';

// HTTP only: each web data operation's zod contract and a call into the service. Mounted at /v1/webdata.
// Screenshot routes live in screenshots/ and are mounted beside these.

const scope = (c: V1Context) => ({ orgId: c.caller.orgId, environment: c.caller.environment });
const FETCH_ERRORS: readonly ErrorCode[] = [
  'URL_NOT_ALLOWED',
  'FETCH_FAILED',
  'FETCH_TIMEOUT',
  'TOO_MANY_REDIRECTS',
  'RESPONSE_TOO_LARGE',
];

const inRequest = async <T>(p: Promise<T>): Promise<T> => {
  try {
    return await p;
  } catch (err) {
    throw asApiError(err);
  }
};

export const webdataV1 = defineV1Routes({
  name: 'webdata',
  prefix: '/webdata',
  routes: [
    defineRoute({
      method: 'POST',
      url: '/extractions',
      name: 'webdata.extractions.create',
      summary: 'Extract content from a web page',
      description: 'Queued: poll GET /webdata/extractions/{id} until completed or failed.',
      body: S.createExtractionBody,
      response: S.createdResponse,
      errors: [],
      handler: (c, { body }) => createExtraction(c.deps, scope(c), body),
    }),
    defineRoute({
      method: 'GET',
      url: '/extractions/:id',
      name: 'webdata.extractions.get',
      summary: 'Get an extraction',
      params: idParams,
      response: S.extractionOut,
      errors: ['EXTRACTION_NOT_FOUND'],
      handler: (c, { params }) => getExtraction(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/extractions',
      name: 'webdata.extractions.list',
      summary: 'List extractions, newest first',
      query: S.listQuery,
      response: S.extractionPage,
      errors: ['INVALID_CURSOR'],
      handler: (c, { query }) => listExtractions(c.deps, scope(c), query),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/extractions/:id',
      name: 'webdata.extractions.delete',
      summary: 'Delete an extraction',
      params: idParams,
      response: S.successResponse,
      errors: ['EXTRACTION_NOT_FOUND'],
      handler: (c, { params }) => deleteExtraction(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/batch/extractions',
      name: 'webdata.batch.extractions',
      summary: 'Extract many URLs with one configuration',
      body: S.batchBody,
      response: S.batchCreated,
      bodyLimit: 4 * 1024 * 1024,
      errors: [],
      handler: (c, { body }) => createBatch(c.deps, scope(c), 'extraction', body),
    }),
    defineRoute({
      method: 'POST',
      url: '/batch/screenshots',
      name: 'webdata.batch.screenshots',
      summary: 'Screenshot many URLs with one configuration',
      body: S.batchBody,
      response: S.batchCreated,
      bodyLimit: 4 * 1024 * 1024,
      errors: [],
      handler: (c, { body }) => createBatch(c.deps, scope(c), 'screenshot', body),
    }),
    defineRoute({
      method: 'GET',
      url: '/batch/:id',
      name: 'webdata.batch.get',
      summary: 'Get a batch job with its counts and items',
      params: idParams,
      response: S.batchOut,
      errors: ['BATCH_NOT_FOUND'],
      handler: (c, { params }) => getBatch(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/batch/:id/cancel',
      name: 'webdata.batch.cancel',
      summary: 'Cancel a batch job; URLs not started are not processed',
      params: idParams,
      response: S.successResponse,
      errors: ['BATCH_NOT_FOUND', 'BATCH_NOT_CANCELLABLE'],
      handler: (c, { params }) => cancelBatch(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/schedules',
      name: 'webdata.schedules.create',
      summary: 'Create a recurring extraction or screenshot',
      description: 'frequency: hourly, daily (default) or weekly; slots are UTC hours, days and ISO weeks.',
      body: S.scheduleBody,
      response: S.scheduleOut,
      errors: [],
      handler: (c, { body }) => createSchedule(c.deps, scope(c), body),
    }),
    defineRoute({
      method: 'GET',
      url: '/schedules/:id',
      name: 'webdata.schedules.get',
      summary: 'Get a schedule',
      params: idParams,
      response: S.scheduleOut,
      errors: ['SCHEDULE_NOT_FOUND'],
      handler: (c, { params }) => getSchedule(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/schedules/:id',
      name: 'webdata.schedules.delete',
      summary: 'Delete a schedule and its runs',
      params: idParams,
      response: S.successResponse,
      errors: ['SCHEDULE_NOT_FOUND'],
      handler: (c, { params }) => deleteSchedule(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/schedules/:id/toggle',
      name: 'webdata.schedules.toggle',
      summary: 'Turn a schedule on or off',
      params: idParams,
      response: z.object({ isActive: z.boolean() }),
      errors: ['SCHEDULE_NOT_FOUND'],
      handler: (c, { params }) => toggleSchedule(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/schedules/:id/runs',
      name: 'webdata.schedules.runs',
      summary: "A schedule's runs, newest first, with their change scores",
      params: idParams,
      query: S.runsQuery,
      response: S.runsPage,
      errors: ['SCHEDULE_NOT_FOUND', 'INVALID_CURSOR'],
      handler: (c, { params, query }) => listRuns(c.deps, scope(c), params.id, query),
    }),
    defineRoute({
      method: 'POST',
      url: '/crawl',
      name: 'webdata.crawl.create',
      summary: 'Crawl a site breadth-first',
      body: S.crawlBody,
      response: S.createdResponse,
      errors: [],
      handler: (c, { body }) => createCrawl(c.deps, scope(c), body),
    }),
    defineRoute({
      method: 'GET',
      url: '/crawl/:id',
      name: 'webdata.crawl.get',
      summary: 'Get a crawl with its progress (and pages with includePages=true)',
      params: idParams,
      query: S.crawlGetQuery,
      response: S.crawlOut,
      errors: ['CRAWL_NOT_FOUND'],
      handler: (c, { params, query }) => getCrawl(c.deps, scope(c), params.id, query.includePages === 'true'),
    }),
    defineRoute({
      method: 'GET',
      url: '/crawl/:crawlId/pages',
      name: 'webdata.crawl.pages',
      summary: 'Pages of a crawl in fetch order',
      params: S.crawlParams,
      query: S.crawlPagesQuery,
      response: S.crawlPagesPage,
      errors: ['CRAWL_NOT_FOUND', 'INVALID_CURSOR'],
      handler: (c, { params, query }) => listCrawlPages(c.deps, scope(c), params.crawlId, query),
    }),
    defineRoute({
      method: 'POST',
      url: '/crawl/:id/cancel',
      name: 'webdata.crawl.cancel',
      summary: 'Cancel a pending or running crawl',
      params: idParams,
      response: S.successResponse,
      errors: ['CRAWL_NOT_FOUND', 'CRAWL_NOT_CANCELLABLE'],
      handler: (c, { params }) => cancelCrawl(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/map',
      name: 'webdata.map',
      summary: "List a site's URLs (sitemaps, else a link crawl)",
      body: S.mapBody,
      response: S.mapOut,
      errors: [...FETCH_ERRORS, 'PAGE_UNUSABLE'],
      handler: (c, { body }) => inRequest(mapSite(c.deps, body)),
    }),
    defineRoute({
      method: 'POST',
      url: '/documents',
      name: 'webdata.documents',
      summary: 'Parse a PDF or DOCX into markdown',
      body: S.documentBody,
      response: S.documentOut,
      errors: [...FETCH_ERRORS, 'PAGE_UNUSABLE', 'DOCUMENT_UNSUPPORTED', 'DOCUMENT_UNREADABLE'],
      handler: (c, { body }) => inRequest(parseDocumentAt(c.deps, body.url)),
    }),
  ],
});
