ALTER TABLE "webdata_batch_items" ADD COLUMN "error_code" text;--> statement-breakpoint
ALTER TABLE "webdata_crawl_pages" ADD COLUMN "raw_html" text;--> statement-breakpoint
ALTER TABLE "webdata_crawl_pages" ADD COLUMN "images" jsonb;--> statement-breakpoint
ALTER TABLE "webdata_crawl_pages" ADD COLUMN "screenshot" jsonb;