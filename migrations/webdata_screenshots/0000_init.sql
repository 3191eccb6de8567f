CREATE TABLE "webdata_screenshots" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"url" text NOT NULL,
	"status" text NOT NULL,
	"format" text NOT NULL,
	"full_page" boolean NOT NULL,
	"device_type" text NOT NULL,
	"options" jsonb NOT NULL,
	"asset_id" uuid,
	"image_url" text,
	"image_size" integer,
	"image_width" integer,
	"image_height" integer,
	"error" text,
	"processing_time_ms" integer,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "webdata_screenshots_tenant_idx" ON "webdata_screenshots" USING btree ("org_id","environment","created_at","id");