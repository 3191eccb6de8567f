CREATE TABLE "v1_idempotency" (
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"status" integer,
	"content_type" text,
	"response" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "v1_idempotency_org_id_environment_key_pk" PRIMARY KEY("org_id","environment","key")
);
--> statement-breakpoint
CREATE TABLE "v1_rate_buckets" (
	"key" text PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"updated_ms" bigint NOT NULL,
	"allowed" boolean DEFAULT true NOT NULL
);
--> statement-breakpoint
CREATE INDEX "v1_idempotency_created_idx" ON "v1_idempotency" USING btree ("created_at");