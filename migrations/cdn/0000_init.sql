CREATE TABLE "cdn_assets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"project_id" uuid,
	"filename" text NOT NULL,
	"folder" text DEFAULT '' NOT NULL,
	"mime_type" text NOT NULL,
	"declared_mime_type" text NOT NULL,
	"type" text NOT NULL,
	"size" bigint NOT NULL,
	"status" text NOT NULL,
	"error" text,
	"width" integer,
	"height" integer,
	"duration" double precision,
	"media" jsonb,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"origin" text DEFAULT 'upload' NOT NULL,
	"blob_key" text NOT NULL,
	"upload_expires_at" timestamp with time zone,
	"confirmed_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cdn_merge_jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"project_id" uuid NOT NULL,
	"status" text NOT NULL,
	"progress" integer DEFAULT 0 NOT NULL,
	"request" jsonb NOT NULL,
	"error" text,
	"output_asset_id" uuid,
	"webhook_url" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "cdn_transform_cache" (
	"blob_key" text PRIMARY KEY NOT NULL,
	"asset_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"content_type" text NOT NULL,
	"size" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cdn_webhook_secrets" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"secret_enc" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"rotated_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "cdn_assets_tenant_created_idx" ON "cdn_assets" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "cdn_assets_tenant_folder_idx" ON "cdn_assets" USING btree ("org_id","environment","folder");--> statement-breakpoint
CREATE INDEX "cdn_assets_pending_idx" ON "cdn_assets" USING btree ("upload_expires_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "cdn_merge_jobs_tenant_idx" ON "cdn_merge_jobs" USING btree ("org_id","environment","project_id","created_at");--> statement-breakpoint
CREATE INDEX "cdn_transform_cache_asset_idx" ON "cdn_transform_cache" USING btree ("asset_id");--> statement-breakpoint
CREATE INDEX "cdn_transform_cache_created_idx" ON "cdn_transform_cache" USING btree ("created_at");