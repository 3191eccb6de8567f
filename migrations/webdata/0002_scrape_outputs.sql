ALTER TABLE "webdata_extractions" ADD COLUMN "html" text;--> statement-breakpoint
ALTER TABLE "webdata_extractions" ADD COLUMN "raw_html" text;--> statement-breakpoint
ALTER TABLE "webdata_extractions" ADD COLUMN "screenshot" jsonb;