DROP INDEX "webdata_schedule_runs_slot_idx";--> statement-breakpoint
ALTER TABLE "webdata_batches" ADD COLUMN "webhook" jsonb;--> statement-breakpoint
ALTER TABLE "webdata_crawl_pages" ADD COLUMN "error_code" text;--> statement-breakpoint
ALTER TABLE "webdata_crawls" ADD COLUMN "webhook" jsonb;--> statement-breakpoint
ALTER TABLE "webdata_extractions" ADD COLUMN "error_code" text;--> statement-breakpoint
ALTER TABLE "webdata_schedule_runs" ADD COLUMN "trigger" text DEFAULT 'schedule' NOT NULL;--> statement-breakpoint
ALTER TABLE "webdata_schedule_runs" ADD COLUMN "baseline" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "webdata_schedules" ADD COLUMN "interval_minutes" integer;--> statement-breakpoint
CREATE INDEX "webdata_schedule_runs_schedule_idx" ON "webdata_schedule_runs" USING btree ("schedule_id","slot","id");--> statement-breakpoint
CREATE UNIQUE INDEX "webdata_schedule_runs_slot_idx" ON "webdata_schedule_runs" USING btree ("schedule_id","slot") WHERE "webdata_schedule_runs"."trigger" = 'schedule';