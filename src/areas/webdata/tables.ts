import { sql } from 'drizzle-orm';
import {
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { ScrapeOptions } from './options/schema.ts';

// Web data: every row carries its organization and environment (production for live keys, sandbox for
// test keys); every query filters on both. Screenshots keep their own table file (screenshots/).

export const JOB_STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const EXTRACTION_MODES = ['auto', 'schema', 'markdown', 'raw', 'selectors'] as const;
export type ExtractionMode = (typeof EXTRACTION_MODES)[number];

export type PageMetadata = { title: string | null; description: string | null; ogImage: string | null };

/** What the caller asked for, kept so a batch or schedule can run the same request again. */
export type ExtractionRequest = ScrapeOptions & {
  mode: ExtractionMode;
  schema?: Record<string, unknown>;
  prompt?: string;
  includeLinks?: boolean;
  includeImages?: boolean;
  includeMetadata?: boolean;
  waitForSelector?: string;
  waitForTimeout?: number;
};

export type ExtractionShot = {
  assetId: string;
  url: string;
  width: number;
  height: number;
  truncated: boolean;
};

export const webdataExtractions = pgTable(
  'webdata_extractions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    url: text('url').notNull(),
    mode: text('mode').$type<ExtractionMode>().notNull(),
    status: text('status').$type<JobStatus>().notNull(),
    request: jsonb('request').$type<ExtractionRequest>().notNull(),
    extractedData: jsonb('extracted_data').$type<Record<string, unknown>>(),
    markdown: text('markdown'),
    pageMetadata: jsonb('page_metadata').$type<PageMetadata>(),
    links: jsonb('links').$type<string[]>(),
    images: jsonb('images').$type<string[]>(),
    /** Format html: the HTML the markdown was made from. */
    html: text('html'),
    /** Format rawHtml: the page's HTML as fetched or rendered. */
    rawHtml: text('raw_html'),
    /** Formats screenshot / screenshot@fullPage: the picture on the CDN. */
    screenshot: jsonb('screenshot').$type<ExtractionShot>(),
    /** `model`, `heuristic` or `selectors` for schema/auto extractions. */
    extractedBy: text('extracted_by'),
    /** `fetch` or `browser`: how the page was obtained. */
    fetchedWith: text('fetched_with'),
    finalUrl: text('final_url'),
    tokensUsed: integer('tokens_used').notNull().default(0),
    processingTimeMs: integer('processing_time_ms'),
    error: text('error'),
    /** A failure's code (errors.ts PageFailureCode), the one POST /webdata/documents answers with. */
    errorCode: text('error_code'),
    batchId: uuid('batch_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    index('webdata_extractions_tenant_idx').on(t.orgId, t.environment, t.createdAt, t.id),
    index('webdata_extractions_batch_idx').on(t.batchId),
  ],
);

export const WEBHOOK_EVENTS = ['started', 'page', 'completed', 'failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A crawl's or batch's webhook as kept (webhooks.ts): the secret only encrypted. */
export type StoredWebhook = {
  url: string;
  secretEnc: string;
  events: WebhookEvent[];
  metadata: Record<string, unknown>;
};

export const BATCH_KINDS = ['extraction', 'screenshot'] as const;
export type BatchKind = (typeof BATCH_KINDS)[number];

export const webdataBatches = pgTable(
  'webdata_batches',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    type: text('type').$type<BatchKind>().notNull(),
    status: text('status').$type<JobStatus>().notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    totalUrls: integer('total_urls').notNull(),
    processedUrls: integer('processed_urls').notNull().default(0),
    successfulUrls: integer('successful_urls').notNull().default(0),
    failedUrls: integer('failed_urls').notNull().default(0),
    /** Stamped while a worker runs the batch; a stale one means that worker stopped (sweep.ts). */
    heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }),
    /** How often the sweeper resumed it: a batch that keeps killing its worker is failed, not looped. */
    resumes: integer('resumes').notNull().default(0),
    /** The caller's webhook (webhooks.ts), its secret encrypted. */
    webhook: jsonb('webhook').$type<StoredWebhook>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    index('webdata_batches_tenant_idx').on(t.orgId, t.environment, t.createdAt),
    index('webdata_batches_status_idx').on(t.status),
  ],
);

/** One URL of a batch; `resultId` is the extraction (or screenshot) it produced. */
export const webdataBatchItems = pgTable(
  'webdata_batch_items',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    batchId: uuid('batch_id').notNull(),
    position: integer('position').notNull(),
    url: text('url').notNull(),
    status: text('status').$type<JobStatus>().notNull(),
    resultId: uuid('result_id'),
    error: text('error'),
    /** The failure's code, the one its extraction record carries (REMOTE_*, PAGE_UNUSABLE…). */
    errorCode: text('error_code'),
  },
  (t) => [uniqueIndex('webdata_batch_items_pos_idx').on(t.batchId, t.position)],
);

export type CrawlOptions = {
  maxDepth: number;
  maxPages: number;
  formats: string[];
  respectRobotsTxt: boolean;
  stealth: boolean;
  /** Regexes on a link's path: follow only links matching one of includePaths, none of excludePaths. */
  includePaths?: string[];
  excludePaths?: string[];
  /** skip: links only; include: the sitemap's URLs seeded beside the links; only: the sitemap's URLs. */
  sitemap?: 'skip' | 'include' | 'only';
  allowSubdomains?: boolean;
  /** What each page's markdown keeps: the extraction options of the same names. */
  scrapeOptions?: { onlyMainContent?: boolean; includeTags?: string[]; excludeTags?: string[] };
  /** Pages this organization stored in another crawl within maxAge ms are reused, not fetched. */
  maxAge?: number;
};

export const webdataCrawls = pgTable(
  'webdata_crawls',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    url: text('url').notNull(),
    status: text('status').$type<JobStatus>().notNull(),
    options: jsonb('options').$type<CrawlOptions>().notNull(),
    pagesCrawled: integer('pages_crawled').notNull().default(0),
    pagesFailed: integer('pages_failed').notNull().default(0),
    /** URLs discovered and not yet fetched, for progress. */
    pagesQueued: integer('pages_queued').notNull().default(0),
    error: text('error'),
    /** Stamped while a worker runs the crawl; a stale one means that worker stopped (sweep.ts). */
    heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }),
    /** The caller's webhook (webhooks.ts), its secret encrypted. */
    webhook: jsonb('webhook').$type<StoredWebhook>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    index('webdata_crawls_tenant_idx').on(t.orgId, t.environment, t.createdAt),
    index('webdata_crawls_status_idx').on(t.status),
  ],
);

export const webdataCrawlPages = pgTable(
  'webdata_crawl_pages',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    crawlId: uuid('crawl_id').notNull(),
    /** Order of fetching (breadth-first), the page cursor's key. */
    seq: integer('seq').notNull(),
    url: text('url').notNull(),
    depth: integer('depth').notNull(),
    statusCode: integer('status_code'),
    title: text('title'),
    markdown: text('markdown'),
    /** Format html: the HTML the markdown was made from (the content choice applied). */
    html: text('html'),
    /** Format rawHtml: the page as fetched (or rendered, with a screenshot). */
    rawHtml: text('raw_html'),
    links: jsonb('links').$type<string[]>(),
    images: jsonb('images').$type<string[]>(),
    screenshot: jsonb('screenshot').$type<ExtractionShot>(),
    error: text('error'),
    errorCode: text('error_code'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('webdata_crawl_pages_seq_idx').on(t.crawlId, t.seq),
    // maxAge: a page of the same URL stored recently by another crawl (options/crawl-cache.ts).
    index('webdata_crawl_pages_url_idx').on(t.url, t.createdAt),
  ],
);

/** `interval`: every `intervalMinutes` (5 to 10,080), slots counted from the Unix epoch, UTC. */
export const SCHEDULE_FREQUENCIES = ['hourly', 'daily', 'weekly', 'interval'] as const;
export type ScheduleFrequency = (typeof SCHEDULE_FREQUENCIES)[number];

export const webdataSchedules = pgTable(
  'webdata_schedules',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    name: text('name').notNull(),
    url: text('url').notNull(),
    type: text('type').$type<BatchKind>().notNull(),
    frequency: text('frequency').$type<ScheduleFrequency>().notNull(),
    /** Set only for frequency `interval`. */
    intervalMinutes: integer('interval_minutes'),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    detectChanges: boolean('detect_changes').notNull(),
    changeThreshold: doublePrecision('change_threshold').notNull(),
    isActive: boolean('is_active').notNull(),
    lastRunAt: timestamp('last_run_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('webdata_schedules_tenant_idx').on(t.orgId, t.environment, t.createdAt),
    index('webdata_schedules_active_idx').on(t.isActive),
  ],
);

export const RUN_TRIGGERS = ['schedule', 'manual'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/**
 * One scheduled run per (schedule, slot): the slot is the start of the period the run belongs to, and the
 * unique index is what keeps two workers (or a restart) from running one slot twice. A manual run ("run
 * now") has the moment it was asked for as its slot and stays outside that index.
 */
export const webdataScheduleRuns = pgTable(
  'webdata_schedule_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    scheduleId: uuid('schedule_id').notNull(),
    slot: timestamp('slot', { withTimezone: true }).notNull(),
    status: text('status').$type<JobStatus>().notNull(),
    trigger: text('trigger').$type<RunTrigger>().notNull().default('schedule'),
    resultId: uuid('result_id'),
    /** The first completed run of a change-detecting schedule: nothing earlier to compare with. */
    baseline: boolean('baseline').notNull().default(false),
    /** The text compared with the next run (markdown of an extraction). */
    content: text('content'),
    changed: boolean('changed'),
    changeScore: doublePrecision('change_score'),
    diff: text('diff'),
    error: text('error'),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('webdata_schedule_runs_slot_idx')
      .on(t.scheduleId, t.slot)
      .where(sql`${t.trigger} = 'schedule'`),
    index('webdata_schedule_runs_schedule_idx').on(t.scheduleId, t.slot, t.id),
  ],
);
