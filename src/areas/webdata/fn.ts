import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import { createCrawl, getCrawl } from './crawls.ts';
import { recentWebData } from './dashboard.ts';
import { createExtraction, getExtraction } from './extractions.ts';
import * as S from './schema.ts';
import { readScreenshotImage } from './screenshots/image.ts';
import * as Shot from './screenshots/schema.ts';
import { createScreenshot, getScreenshot } from './screenshots/screenshots.ts';

// The CLI's web data functions (`pier web extract|crawl|screenshot`): a member of an organization, signed in with a
// personal token, starts and reads extractions, crawls and screenshots of one environment. They call the same services
// as the v1 routes; the resources are the organization's, visible to its API keys too.

const environment = z.enum(['production', 'sandbox']);
const scoped = { orgSlug: slugInput, environment: environment.default('production') };

async function scopeOf(deps: Deps, userId: string, input: { orgSlug: string; environment: string }) {
  const { org } = await orgForUser(deps, userId, input.orgSlug);
  return { orgId: org.id, environment: input.environment };
}

export const startWebExtractionForCli = defineFn({
  name: 'startWebExtractionForCli',
  summary: 'Queues an extraction of a page for an organization (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, ...S.createExtractionBody.shape }),
  output: S.createdResponse,
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug, environment, ...body }) =>
    createExtraction(deps, await scopeOf(deps, caller.userId, { orgSlug, environment }), body),
});

export const getWebExtractionForCli = defineFn({
  name: 'getWebExtractionForCli',
  summary: "Reads one of an organization's extractions (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, id: z.string().min(1).max(100) }),
  output: S.extractionOut,
  errors: ['ORG_NOT_FOUND', 'EXTRACTION_NOT_FOUND'],
  handler: async ({ deps, caller }, input) =>
    getExtraction(deps, await scopeOf(deps, caller.userId, input), input.id),
});

export const startWebCrawlForCli = defineFn({
  name: 'startWebCrawlForCli',
  summary: 'Queues a crawl of a site for an organization (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, ...S.crawlBody.shape }),
  output: S.createdResponse,
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug, environment, ...body }) =>
    createCrawl(deps, await scopeOf(deps, caller.userId, { orgSlug, environment }), body),
});

export const getWebCrawlForCli = defineFn({
  name: 'getWebCrawlForCli',
  summary: "Reads one of an organization's crawls with its progress, and its pages when asked (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    id: z.string().min(1).max(100),
    includePages: z.boolean().default(false),
  }),
  output: S.crawlOut,
  errors: ['ORG_NOT_FOUND', 'CRAWL_NOT_FOUND'],
  handler: async ({ deps, caller }, input) =>
    getCrawl(deps, await scopeOf(deps, caller.userId, input), input.id, input.includePages),
});

export const startWebScreenshotForCli = defineFn({
  name: 'startWebScreenshotForCli',
  summary: 'Queues a screenshot of a page for an organization (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, ...Shot.createFields }).superRefine(Shot.checkCreate),
  output: Shot.createResponse,
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug, environment, ...body }) => {
    const s = await scopeOf(deps, caller.userId, { orgSlug, environment });
    const { id, status } = await createScreenshot(deps, { ...s, environment }, body);
    return { id, status };
  },
});

export const getWebScreenshotForCli = defineFn({
  name: 'getWebScreenshotForCli',
  summary: "Reads one of an organization's screenshots, with the image's bytes when asked (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    id: z.string().min(1).max(100),
    includeImage: z.boolean().default(false),
  }),
  output: Shot.screenshot.extend({ imageBase64: z.string().nullable().optional() }),
  errors: ['ORG_NOT_FOUND', 'SCREENSHOT_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const s = await scopeOf(deps, caller.userId, input);
    const scope = { ...s, environment: input.environment };
    const shot = await getScreenshot(deps, scope, input.id);
    if (!input.includeImage || shot.status !== 'completed') return shot;
    const bytes = await readScreenshotImage(deps, scope, input.id);
    return { ...shot, imageBase64: bytes?.toString('base64') ?? null };
  },
});

const status = z.string();
export const listRecentWebDataForCli = defineFn({
  name: 'listRecentWebDataForCli',
  summary: "The organization's newest extractions, crawls, batches, schedules and screenshots (dashboard).",
  auth: { kind: 'user' },
  input: z.strictObject(scoped),
  output: z.object({
    extractions: z.array(
      z.object({
        id: z.string(),
        url: z.string(),
        mode: z.string(),
        status,
        fetchedWith: z.string().nullable(),
        error: z.string().nullable(),
        createdAt: z.string(),
      }),
    ),
    crawls: z.array(
      z.object({
        id: z.string(),
        url: z.string(),
        status,
        pagesCrawled: z.number(),
        pagesQueued: z.number(),
        maxPages: z.number(),
        error: z.string().nullable(),
        createdAt: z.string(),
      }),
    ),
    batches: z.array(
      z.object({
        id: z.string(),
        type: z.string(),
        status,
        totalUrls: z.number(),
        processedUrls: z.number(),
        failedUrls: z.number(),
        createdAt: z.string(),
      }),
    ),
    schedules: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        url: z.string(),
        type: z.string(),
        frequency: z.string(),
        isActive: z.boolean(),
        lastRun: z
          .object({
            status,
            startedAt: z.string(),
            changed: z.boolean().nullable(),
            changeScore: z.number().nullable(),
            baseline: z.boolean(),
            error: z.string().nullable(),
          })
          .nullable(),
      }),
    ),
    screenshots: z.array(
      z.object({
        id: z.string(),
        url: z.string(),
        status,
        format: z.string(),
        imageUrl: z.string().nullable(),
        imageWidth: z.number().nullable(),
        imageHeight: z.number().nullable(),
        error: z.string().nullable(),
        createdAt: z.string(),
      }),
    ),
    at: z.string().nullable(),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => recentWebData(deps, await scopeOf(deps, caller.userId, input)),
});
