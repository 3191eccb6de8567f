ALTER TABLE "cdn_assets" ADD COLUMN "upload_offset" bigint;--> statement-breakpoint
ALTER TABLE "cdn_assets" ADD COLUMN "upload_chunks" jsonb;