ALTER TABLE "memories" ADD COLUMN "event_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "event_precision" text;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "valid_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "lineage" jsonb;--> statement-breakpoint
ALTER TABLE "memory_agents" ADD COLUMN "infer" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_agents" ADD COLUMN "infer_model" text;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "decision" text;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "reason" text;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "related_memory_id" uuid;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "model" text;--> statement-breakpoint
ALTER TABLE "memory_history" ADD COLUMN "seq" bigserial NOT NULL;--> statement-breakpoint
CREATE INDEX "memories_event_idx" ON "memories" USING btree ("org_id","environment","event_at");