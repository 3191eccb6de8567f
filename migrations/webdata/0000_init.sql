CREATE TABLE "webdata_batch_items" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"batch_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"url" text NOT NULL,
	"status" text NOT NULL,
	"result_id" uuid,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "webdata_batches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"config" jsonb NOT NULL,
	"total_urls" integer NOT NULL,
	"processed_urls" integer DEFAULT 0 NOT NULL,
	"successful_urls" integer DEFAULT 0 NOT NULL,
	"failed_urls" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webdata_crawl_pages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"crawl_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"url" text NOT NULL,
	"depth" integer NOT NULL,
	"status_code" integer,
	"title" text,
	"markdown" text,
	"html" text,
	"links" jsonb,
	"error" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webdata_crawls" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"url" text NOT NULL,
	"status" text NOT NULL,
	"options" jsonb NOT NULL,
	"pages_crawled" integer DEFAULT 0 NOT NULL,
	"pages_failed" integer DEFAULT 0 NOT NULL,
	"pages_queued" integer DEFAULT 0 NOT NULL,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webdata_extractions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"url" text NOT NULL,
	"mode" text NOT NULL,
	"status" text NOT NULL,
	"request" jsonb NOT NULL,
	"extracted_data" jsonb,
	"markdown" text,
	"page_metadata" jsonb,
	"links" jsonb,
	"images" jsonb,
	"extracted_by" text,
	"fetched_with" text,
	"final_url" text,
	"tokens_used" integer DEFAULT 0 NOT NULL,
	"processing_time_ms" integer,
	"error" text,
	"batch_id" uuid,
	"created_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webdata_schedule_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"schedule_id" uuid NOT NULL,
	"slot" timestamp with time zone NOT NULL,
	"status" text NOT NULL,
	"result_id" uuid,
	"content" text,
	"changed" boolean,
	"change_score" double precision,
	"diff" text,
	"error" text,
	"started_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webdata_schedules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"type" text NOT NULL,
	"frequency" text NOT NULL,
	"config" jsonb NOT NULL,
	"detect_changes" boolean NOT NULL,
	"change_threshold" double precision NOT NULL,
	"is_active" boolean NOT NULL,
	"last_run_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "webdata_batch_items_pos_idx" ON "webdata_batch_items" USING btree ("batch_id","position");--> statement-breakpoint
CREATE INDEX "webdata_batches_tenant_idx" ON "webdata_batches" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "webdata_crawl_pages_seq_idx" ON "webdata_crawl_pages" USING btree ("crawl_id","seq");--> statement-breakpoint
CREATE INDEX "webdata_crawls_tenant_idx" ON "webdata_crawls" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "webdata_extractions_tenant_idx" ON "webdata_extractions" USING btree ("org_id","environment","created_at","id");--> statement-breakpoint
CREATE INDEX "webdata_extractions_batch_idx" ON "webdata_extractions" USING btree ("batch_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webdata_schedule_runs_slot_idx" ON "webdata_schedule_runs" USING btree ("schedule_id","slot");--> statement-breakpoint
CREATE INDEX "webdata_schedules_tenant_idx" ON "webdata_schedules" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "webdata_schedules_active_idx" ON "webdata_schedules" USING btree ("is_active");