ALTER TABLE "app_logs" ADD COLUMN "phase" text;--> statement-breakpoint
ALTER TABLE "deployments" ADD COLUMN "origin" text DEFAULT 'deploy' NOT NULL;--> statement-breakpoint
ALTER TABLE "deployments" ADD COLUMN "source_id" uuid;--> statement-breakpoint
ALTER TABLE "deployments" ADD COLUMN "release_id" uuid;