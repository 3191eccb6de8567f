CREATE TABLE "cdn_presets" (
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"options" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "cdn_presets_org_id_environment_name_pk" PRIMARY KEY("org_id","environment","name")
);
--> statement-breakpoint
CREATE TABLE "cdn_url_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"label" text,
	"secret_enc" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cdn_assets" ADD COLUMN "frames" integer;--> statement-breakpoint
ALTER TABLE "cdn_assets" ADD COLUMN "placeholder" text;--> statement-breakpoint
CREATE INDEX "cdn_url_keys_tenant_idx" ON "cdn_url_keys" USING btree ("org_id","environment");