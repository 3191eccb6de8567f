ALTER TABLE "webdata_batches" ADD COLUMN "heartbeat_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webdata_batches" ADD COLUMN "resumes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webdata_crawls" ADD COLUMN "heartbeat_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "webdata_batches_status_idx" ON "webdata_batches" USING btree ("status");--> statement-breakpoint
CREATE INDEX "webdata_crawls_status_idx" ON "webdata_crawls" USING btree ("status");