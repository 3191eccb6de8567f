import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

// Web data screenshots: one row per requested capture, tenant-scoped by organization and environment like
// every v1 row. The image itself is a CDN asset (`assetId`); the row keeps what the contract returns about it
// so a screenshot still reads the same after the asset is moved or renamed.

export const SCREENSHOT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type ScreenshotStatus = (typeof SCREENSHOT_STATUSES)[number];

export const webdataScreenshots = pgTable(
  'webdata_screenshots',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    url: text('url').notNull(),
    status: text('status').$type<ScreenshotStatus>().notNull(),
    format: text('format').notNull(),
    fullPage: boolean('full_page').notNull(),
    deviceType: text('device_type').notNull(),
    /** The whole create body, as validated (the job renders from it; schedules reuse it). */
    options: jsonb('options').$type<Record<string, unknown>>().notNull(),
    assetId: uuid('asset_id'),
    imageUrl: text('image_url'),
    imageSize: integer('image_size'),
    imageWidth: integer('image_width'),
    imageHeight: integer('image_height'),
    error: text('error'),
    processingTimeMs: integer('processing_time_ms'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [index('webdata_screenshots_tenant_idx').on(t.orgId, t.environment, t.createdAt, t.id)],
);

export type ScreenshotRow = typeof webdataScreenshots.$inferSelect;
