import { z } from 'zod';
import { cursorPageSchema, cursorQuery } from '../../core/pagination.ts';
import { CRAWL_FORMATS, crawlOptionFields, SITEMAP_MODES, scrapeOptionFields } from './options/schema.ts';
import {
  BATCH_KINDS,
  EXTRACTION_MODES,
  JOB_STATUSES,
  RUN_TRIGGERS,
  SCHEDULE_FREQUENCIES,
  WEBHOOK_EVENTS,
} from './tables.ts';
import { webhookBody } from './webhooks.ts';

// The web data section of the v1 contract, one schema per operation. Fields beyond the contract are
// Pier's and say so in their description.

/** An http(s) URL; anything else is a 400 before any fetch. */
export const urlSchema = z
  .string()
  .min(1)
  .max(2048)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'url must be an absolute http or https URL');

const jsonSchemaObject = z
  .record(z.string(), z.unknown())
  .refine((s) => JSON.stringify(s).length <= 32_768, 'schema must be at most 32 KB of JSON');

export const createExtractionBody = z.object({
  url: urlSchema,
  mode: z.enum(EXTRACTION_MODES).optional(),
  schema: jsonSchemaObject.optional(),
  prompt: z.string().max(4000).optional(),
  includeLinks: z.boolean().optional(),
  includeImages: z.boolean().optional(),
  includeMetadata: z.boolean().optional(),
  waitForSelector: z.string().min(1).max(500).optional(),
  waitForTimeout: z.number().int().min(0).max(30_000).optional(),
  ...scrapeOptionFields,
});
export type CreateExtraction = z.infer<typeof createExtractionBody>;

export const createdResponse = z.object({ id: z.string(), status: z.enum(JOB_STATUSES) });

const pageMetadata = z.object({
  title: z.string().nullable(),
  description: z.string().nullable(),
  ogImage: z.string().nullable(),
});

export const extractionOut = z.object({
  id: z.string(),
  url: z.string(),
  mode: z.enum(EXTRACTION_MODES),
  status: z.enum(JOB_STATUSES),
  extractedData: z.record(z.string(), z.unknown()).nullable(),
  markdown: z.string().nullable(),
  pageMetadata: pageMetadata.nullable(),
  links: z.array(z.string()).optional().describe('With includeLinks.'),
  images: z.array(z.string()).optional().describe('With includeImages.'),
  html: z.string().optional().describe('Pier: with format html, the HTML the markdown was made from.'),
  rawHtml: z
    .string()
    .optional()
    .describe("Pier: with format rawHtml, the page's HTML as fetched or rendered."),
  screenshot: z
    .object({ url: z.string(), width: z.number(), height: z.number(), truncated: z.boolean() })
    .optional()
    .describe('Pier: with format screenshot or screenshot@fullPage, the picture (PNG) on the CDN.'),
  extractedBy: z.string().nullable().describe('Pier: `model` or `heuristic` (schema and auto modes).'),
  fetchedWith: z.string().nullable().describe('Pier: `fetch` or `browser`.'),
  finalUrl: z.string().nullable().describe('Pier: the URL after redirects.'),
  tokensUsed: z.number(),
  processingTimeMs: z.number().nullable(),
  error: z.string().nullable().describe('Pier: why it failed, for a person.'),
  errorCode: z
    .string()
    .nullable()
    .describe(
      'Pier: why it failed, for a program (REMOTE_TIMEOUT, REMOTE_HTTP_ERROR, … as documents answers).',
    ),
  batchId: z.string().nullable(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
});
export type ExtractionOut = z.infer<typeof extractionOut>;

export const listQuery = cursorQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
  status: z.enum(JOB_STATUSES).optional(),
  url: z.string().max(2048).optional(),
});
export type ListQuery = z.infer<typeof listQuery>;
export const extractionPage = cursorPageSchema(extractionOut);

export const successResponse = z.object({ success: z.literal(true) });

export const batchBody = z.object({
  urls: z.array(urlSchema).min(1).max(1000),
  config: z.record(z.string(), z.unknown()).optional(),
  webhook: webhookBody.optional(),
});
const webhookShown = z
  .object({ url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)) })
  .nullable()
  .describe('Pier: the webhook asked for at creation (its secret is never shown).');
export const batchCreated = z.object({ id: z.string(), status: z.enum(JOB_STATUSES), totalUrls: z.number() });

export const batchOut = z.object({
  id: z.string(),
  type: z.enum(BATCH_KINDS),
  status: z.enum(JOB_STATUSES),
  totalUrls: z.number(),
  processedUrls: z.number(),
  successfulUrls: z.number(),
  failedUrls: z.number(),
  progress: z.number().describe('Pier: processedUrls / totalUrls, 0 to 100.'),
  items: z
    .array(
      z.object({
        url: z.string(),
        status: z.enum(JOB_STATUSES),
        resultId: z.string().nullable(),
        error: z.string().nullable(),
        errorCode: z.string().nullable(),
      }),
    )
    .describe('Pier: each URL with its result id (an extraction or screenshot) and failure code.'),
  webhook: webhookShown,
  createdAt: z.string(),
  completedAt: z.string().nullable(),
});

export const scheduleBody = z.object({
  name: z.string().min(1).max(200),
  url: urlSchema,
  type: z.enum(BATCH_KINDS),
  frequency: z
    .enum(SCHEDULE_FREQUENCIES)
    .optional()
    .describe('Default `daily`; `interval` with intervalMinutes.'),
  intervalMinutes: z
    .number()
    .int()
    .min(5)
    .max(10_080)
    .optional()
    .describe(
      'Pier: run every N minutes (5 to 10,080), slots counted from the Unix epoch; frequency becomes `interval`.',
    ),
  config: z.record(z.string(), z.unknown()).optional(),
  detectChanges: z.boolean().optional(),
  changeThreshold: z.number().min(0).max(1).optional(),
});
export type ScheduleBody = z.infer<typeof scheduleBody>;

export const scheduleOut = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  type: z.enum(BATCH_KINDS),
  frequency: z.enum(SCHEDULE_FREQUENCIES),
  intervalMinutes: z.number().describe('Pier: minutes between runs (60, 1440, 10080 for the presets).'),
  config: z.record(z.string(), z.unknown()),
  detectChanges: z.boolean(),
  changeThreshold: z.number(),
  isActive: z.boolean(),
  lastRunAt: z.string().nullable(),
  createdAt: z.string(),
});

export const schedulesQuery = cursorQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
  isActive: z.enum(['true', 'false']).optional(),
  type: z.enum(BATCH_KINDS).optional(),
});
export type SchedulesQuery = z.infer<typeof schedulesQuery>;
export const schedulesPage = cursorPageSchema(scheduleOut);

export const scheduleRun = z.object({
  id: z.string(),
  slot: z.string(),
  trigger: z.enum(RUN_TRIGGERS).describe('Pier: `schedule` (its slot came) or `manual` (run now).'),
  startedAt: z.string(),
  completedAt: z.string().nullable(),
  status: z.enum(JOB_STATUSES),
  resultId: z.string().nullable(),
  baseline: z
    .boolean()
    .describe(
      'Pier: nothing completed before this run, so it is what the next run compares with (changed null).',
    ),
  changed: z.boolean().nullable(),
  changeScore: z.number().nullable(),
  diff: z.string().nullable(),
  /** Screenshot schedules: the changed areas of the picture (CSS px of the image), largest first. */
  regions: z
    .array(z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() }))
    .nullable(),
  error: z.string().nullable(),
});
export const runsQuery = cursorQuery({ defaultLimit: 20, maxLimit: 100 });
export const runsPage = cursorPageSchema(scheduleRun);

export const crawlBody = z.object({
  url: urlSchema,
  maxDepth: z.number().int().min(0).max(10).default(2),
  maxPages: z.number().int().min(1).max(10_000).default(50),
  // Repeats are kept once and [] is the default; no item bounds (the MCP tools/list byte budget).
  formats: z.array(z.enum(CRAWL_FORMATS)).optional(),
  respectRobotsTxt: z.boolean().default(true),
  stealth: z.boolean().default(false),
  ...crawlOptionFields,
  webhook: webhookBody.optional(),
});
export type CrawlBody = z.infer<typeof crawlBody>;

export const crawlPage = z.object({
  url: z.string(),
  depth: z.number(),
  statusCode: z.number().nullable(),
  title: z.string().nullable(),
  markdown: z.string().nullable(),
  html: z.string().optional(),
  rawHtml: z.string().optional(),
  links: z.array(z.string()).optional(),
  images: z.array(z.string()).optional(),
  screenshot: z
    .object({ url: z.string(), width: z.number(), height: z.number(), truncated: z.boolean() })
    .nullable()
    .optional(),
  error: z.string().nullable(),
});

export const crawlOut = z.object({
  id: z.string(),
  url: z.string(),
  status: z.enum(JOB_STATUSES),
  maxDepth: z.number(),
  maxPages: z.number(),
  formats: z.array(z.string()),
  respectRobotsTxt: z.boolean(),
  stealth: z.boolean(),
  includePaths: z.array(z.string()).optional(),
  excludePaths: z.array(z.string()).optional(),
  sitemap: z.enum(SITEMAP_MODES).optional().describe('Pier: skip (default), include or only.'),
  allowSubdomains: z.boolean().optional(),
  scrapeOptions: z
    .object({
      formats: z.array(z.string()).optional(),
      onlyMainContent: z.boolean().optional(),
      includeTags: z.array(z.string()).optional(),
      excludeTags: z.array(z.string()).optional(),
    })
    .optional(),
  maxAge: z.number().optional(),
  pagesCrawled: z.number().describe('Pier: pages stored so far (progress).'),
  pagesFailed: z.number(),
  pagesQueued: z.number().describe('Pier: URLs found and not yet fetched.'),
  error: z.string().nullable(),
  failedPages: z
    .array(
      z.object({
        url: z.string(),
        statusCode: z.number().nullable(),
        error: z.string(),
        code: z.string().nullable(),
      }),
    )
    .describe('Pier: pages that failed (URL, status answered or null, reason), fetch order, at most 1,000.'),
  webhook: webhookShown,
  createdAt: z.string(),
  completedAt: z.string().nullable(),
  pages: z.array(crawlPage).optional(),
  pagesNextCursor: z
    .string()
    .nullable()
    .optional()
    .describe('Pier: with includePages, set when more than 1,000 pages: continue on /crawl/{id}/pages.'),
});
export const crawlGetQuery = z.object({
  includePages: z.enum(['true', 'false']).optional(),
});
export const crawlPagesQuery = cursorQuery({ defaultLimit: 20, maxLimit: 100 });
export const crawlPagesPage = cursorPageSchema(crawlPage);
export const crawlParams = z.object({ crawlId: z.string().min(1).max(200) });

export const mapBody = z.object({
  url: urlSchema,
  search: z.string().max(200).optional(),
  limit: z.number().int().min(1).max(5000).default(100),
});
export const mapOut = z.object({
  status: z.enum(['completed']),
  url: z.string(),
  urls: z.array(z.string()),
  source: z.enum(['sitemap', 'links']).describe('Pier: where the URLs came from.'),
});

export const documentBody = z.object({ url: urlSchema });
export const documentOut = z.object({
  status: z.enum(['completed']),
  url: z.string(),
  type: z.enum(['pdf', 'docx']),
  markdown: z.string(),
  pageCount: z.number(),
  metadata: z.object({ title: z.string().nullable() }),
  scanned: z.boolean().describe('Pier: some pages have no text layer, only an image (a scan).'),
  ocr: z
    .object({ engine: z.literal('tesseract'), language: z.string(), pages: z.number() })
    .nullable()
    .describe('Pier: the scanned pages read by OCR (null when none were).'),
  warnings: z.array(z.string()).describe('Pier: what the markdown may lack, for a person.'),
});
