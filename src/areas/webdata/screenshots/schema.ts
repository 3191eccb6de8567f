import { z } from 'zod';
import { cursorPageSchema, cursorQuery } from '../../../core/pagination.ts';
import { SCREENSHOT_STATUSES } from './tables.ts';

// The screenshot part of the Web data contract. Limits Pier adds (the contract gives none): viewports of
// 100–3840 × 100–4320 CSS px, waitForTimeout up to 30 s, selectors up to 500 characters.

export const FORMATS = ['png', 'jpeg', 'webp', 'pdf'] as const;
export const DEVICE_TYPES = ['desktop', 'tablet', 'mobile'] as const;

const urlSchema = z
  .string()
  .trim()
  .min(1, 'url is required')
  .max(2048)
  .refine((s) => /^https?:\/\//i.test(s) && URL.canParse(s), 'url must be an absolute http or https URL');

const selectorSchema = z.string().trim().min(1).max(500);

export const createFields = {
  url: urlSchema,
  format: z.enum(FORMATS).default('png'),
  quality: z.number().int().min(0).max(100).optional(),
  fullPage: z.boolean().default(false),
  deviceType: z.enum(DEVICE_TYPES).default('desktop'),
  viewportWidth: z.number().int().min(100).max(3840).optional(),
  viewportHeight: z.number().int().min(100).max(4320).optional(),
  selector: selectorSchema.optional(),
  blockAds: z.boolean().default(false),
  blockCookieBanners: z.boolean().default(false),
  darkMode: z.boolean().default(false),
  waitForSelector: selectorSchema.optional(),
  waitForTimeout: z.number().int().min(0).max(30_000).optional(),
};

/** The combinations a screenshot refuses (shared by the create body and the CLI's function). */
export function checkCreate(
  b: { quality?: number; format: string; selector?: string; fullPage: boolean },
  ctx: z.RefinementCtx,
): void {
  if (b.quality !== undefined && b.format !== 'jpeg' && b.format !== 'webp') {
    ctx.addIssue({ code: 'custom', path: ['quality'], message: 'quality applies to jpeg and webp only' });
  }
  if (b.selector && b.format === 'pdf') {
    ctx.addIssue({
      code: 'custom',
      path: ['selector'],
      message: 'selector cannot be used with format pdf',
    });
  }
  if (b.selector && b.fullPage) {
    ctx.addIssue({
      code: 'custom',
      path: ['selector'],
      message: 'selector and fullPage cannot be combined',
    });
  }
}

export const createBody = z.object(createFields).strict().superRefine(checkCreate);
export type CreateBody = z.infer<typeof createBody>;
/** The options a capture runs with (a create body without its URL); also what batches and schedules pass. */
export type ScreenshotOptions = Omit<CreateBody, 'url'>;

export const createResponse = z.object({ id: z.string(), status: z.enum(SCREENSHOT_STATUSES) });

export const screenshot = z.object({
  id: z.string(),
  url: z.string(),
  status: z.enum(SCREENSHOT_STATUSES),
  format: z.enum(FORMATS),
  fullPage: z.boolean(),
  deviceType: z.enum(DEVICE_TYPES),
  imageUrl: z.string().nullable(),
  imageSize: z.number().int().nullable(),
  imageWidth: z.number().int().nullable(),
  imageHeight: z.number().int().nullable(),
  truncated: z
    .boolean()
    .describe(
      "Pier: a full page taller than Chromium's capture limit (16,384 device px) was cut there; pageHeight is the whole.",
    ),
  pageHeight: z
    .number()
    .int()
    .nullable()
    .describe("Pier: full-page captures: the page's whole height in CSS px."),
  processingTimeMs: z.number().int().nullable(),
  /** Why it failed, for a person (beyond the contract, shared with extractions, batch items and crawls). */
  error: z.string().nullable(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
});
export type ScreenshotOut = z.infer<typeof screenshot>;

export const idParams = z.object({ id: z.string().max(100) });

export const listQuery = cursorQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
  status: z.enum(SCREENSHOT_STATUSES).optional(),
  url: z.string().max(2048).optional(),
});
export type ListQuery = z.infer<typeof listQuery>;

export const screenshotPage = cursorPageSchema(screenshot);

export const successResponse = z.object({ success: z.literal(true) });
