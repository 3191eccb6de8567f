import { z } from 'zod';
import type { PageAction } from '../../../core/browser/actions.ts';
import { fieldSelectorProblem, isXPath, regexProblem, selectorProblem } from './selectors.ts';

// The scraper options of extractions and crawls, named as Firecrawl's v1 scrape and crawl options are
// (docs/webdata.md, "Scraper options"): output formats, what part of the page is content, actions in the
// browser before capture, selector-based fields, reuse of a recent result, and which links a crawl follows.

export const SCRAPE_FORMATS = [
  'markdown',
  'html',
  'rawHtml',
  'links',
  'images',
  'screenshot',
  'screenshot@fullPage',
] as const;
export type ScrapeFormat = (typeof SCRAPE_FORMATS)[number];

export const cssSelector = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .superRefine((s, ctx) => {
    const problem = selectorProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: `'${s}' is not a valid CSS selector: ${problem}` });
  });

/** A selector field's: CSS, or XPath 1.0 when it starts with `/`, `./`, `../` or `(`. */
const fieldSelector = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .superRefine((s, ctx) => {
    const problem = fieldSelectorProblem(s);
    if (!problem) return;
    const message = isXPath(s) ? `'${s}' is ${problem}` : `'${s}' is not a valid CSS selector: ${problem}`;
    ctx.addIssue({ code: 'custom', message });
  });

const pathRegex = z
  .string()
  .min(1)
  .max(300)
  .superRefine((s, ctx) => {
    const problem = regexProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: `'${s}' is not a usable regex: ${problem}` });
  });

const action = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('wait'),
      milliseconds: z.number().int().min(1).max(30_000).optional(),
      selector: cssSelector.optional(),
    })
    .strict()
    .refine((a) => a.milliseconds !== undefined || a.selector !== undefined, {
      message: 'a wait action needs milliseconds or selector',
    }),
  z.object({ type: z.literal('click'), selector: cssSelector, all: z.boolean().optional() }).strict(),
  z
    .object({ type: z.literal('write'), text: z.string().max(5000), selector: cssSelector.optional() })
    .strict(),
  z.object({ type: z.literal('press'), key: z.string().min(1).max(50) }).strict(),
  z
    .object({
      type: z.literal('scroll'),
      direction: z.enum(['up', 'down']).optional(),
      selector: cssSelector.optional(),
    })
    .strict(),
]);

/** Wait times of all actions together stay under the page's own deadline. */
const actions = z
  .array(action)
  .min(1)
  .max(50)
  .refine((list) => list.reduce((s, a) => s + (a.type === 'wait' ? (a.milliseconds ?? 0) : 0), 0) <= 60_000, {
    message: 'the actions wait at most 60,000 ms in all',
  });

export type FieldSpec = {
  selector: string;
  /** Read this attribute instead of the text (href and src come back absolute). */
  attribute?: string;
  /** text (default), html (the element's inner HTML), number (the first number in its text). */
  type?: 'text' | 'html' | 'number';
  /** Every match, as an array; otherwise the first match (null when none). */
  list?: boolean;
  /** Read inside each match: an object (or an array of them with list). */
  fields?: Record<string, FieldSpec | string>;
};

const fieldName = z.string().min(1).max(100);
const fieldSpec: z.ZodType<FieldSpec | string> = z.lazy(() =>
  z.union([
    fieldSelector,
    z
      .object({
        selector: fieldSelector,
        attribute: z.string().min(1).max(100).optional(),
        type: z.enum(['text', 'html', 'number']).optional(),
        list: z.boolean().optional(),
        fields: z.record(fieldName, fieldSpec).optional(),
      })
      .strict(),
  ]),
);
export const selectorFields = z
  .record(fieldName, fieldSpec)
  .refine((m) => Object.keys(m).length > 0, 'selectors needs at least one field')
  .refine((m) => JSON.stringify(m).length <= 32_768, 'selectors must be at most 32 KB of JSON');

const DAY_MS = 86_400_000;

/** Fields an extraction takes beside the contract's (and a batch's or schedule's config with them). */
export const scrapeOptionFields = {
  formats: z.array(z.enum(SCRAPE_FORMATS)).min(1).max(SCRAPE_FORMATS.length).optional(),
  onlyMainContent: z.boolean().optional(),
  includeTags: z.array(cssSelector).min(1).max(50).optional(),
  excludeTags: z.array(cssSelector).min(1).max(50).optional(),
  actions: actions.optional(),
  selectors: selectorFields.optional(),
  maxAge: z
    .number()
    .int()
    .min(0)
    .max(30 * DAY_MS)
    .optional(),
};

export type ScrapeOptions = {
  formats?: ScrapeFormat[];
  onlyMainContent?: boolean;
  includeTags?: string[];
  excludeTags?: string[];
  actions?: PageAction[];
  selectors?: Record<string, FieldSpec | string>;
  maxAge?: number;
};

/** A crawl's formats, an extraction's: each stored page's outputs (`screenshot*` renders it in the browser). */
export const CRAWL_FORMATS = SCRAPE_FORMATS;

export const SITEMAP_MODES = ['skip', 'include', 'only'] as const;

/** Fields a crawl takes beside the contract's. */
export const crawlOptionFields = {
  /** What each page's markdown keeps (Firecrawl's crawl scrapeOptions, the content part of them). */
  scrapeOptions: z
    .object({
      /** Firecrawl's place for them; merged with the crawl's `formats` when the crawl is created. */
      formats: z.array(z.enum(CRAWL_FORMATS)).optional(),
      onlyMainContent: scrapeOptionFields.onlyMainContent,
      includeTags: scrapeOptionFields.includeTags,
      excludeTags: scrapeOptionFields.excludeTags,
    })
    .strict()
    .optional(),
  includePaths: z.array(pathRegex).min(1).max(50).optional(),
  excludePaths: z.array(pathRegex).min(1).max(50).optional(),
  sitemap: z.enum(SITEMAP_MODES).default('skip'),
  allowSubdomains: z.boolean().default(false),
  maxAge: scrapeOptionFields.maxAge,
};
