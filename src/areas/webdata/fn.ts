import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { slugInput } from '../../http/fn-schemas.ts';
import { orgForUser } from '../orgs/index.ts';
import { createCrawl, getCrawl } from './crawls.ts';
import { createExtraction, getExtraction } from './extractions.ts';
import * as S from './schema.ts';

// The CLI's web data functions (`pier web extract|crawl`): a member of an organization, signed in with a
// personal token, starts and reads extractions and crawls of one environment. They call the same services
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
