CREATE TABLE "integration_records" (
	"connection_id" uuid NOT NULL,
	"model" text NOT NULL,
	"external_id" text NOT NULL,
	"data" jsonb NOT NULL,
	"hash" text NOT NULL,
	"last_action" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"modified_at" timestamp with time zone NOT NULL,
	"deleted_at" timestamp with time zone,
	"seen_pass" uuid NOT NULL,
	CONSTRAINT "integration_records_connection_id_model_external_id_pk" PRIMARY KEY("connection_id","model","external_id")
);
--> statement-breakpoint
CREATE TABLE "integration_sync_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"sync_id" uuid NOT NULL,
	"status" text NOT NULL,
	"resumed" boolean DEFAULT false NOT NULL,
	"pages" integer DEFAULT 0 NOT NULL,
	"added" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"deleted" integer DEFAULT 0 NOT NULL,
	"error_code" text,
	"error" text,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "integration_syncs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"connection_id" uuid NOT NULL,
	"model" text NOT NULL,
	"frequency_minutes" integer NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"next_run_at" timestamp with time zone NOT NULL,
	"pass_id" uuid,
	"pass_cursor" text,
	"lease_until" timestamp with time zone,
	"last_run_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "integration_records" ADD CONSTRAINT "integration_records_connection_id_integration_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."integration_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_sync_runs" ADD CONSTRAINT "integration_sync_runs_sync_id_integration_syncs_id_fk" FOREIGN KEY ("sync_id") REFERENCES "public"."integration_syncs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_syncs" ADD CONSTRAINT "integration_syncs_connection_id_integration_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."integration_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "integration_records_modified_idx" ON "integration_records" USING btree ("connection_id","model","modified_at","external_id");--> statement-breakpoint
CREATE INDEX "integration_sync_runs_sync_idx" ON "integration_sync_runs" USING btree ("sync_id","started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "integration_syncs_connection_model_idx" ON "integration_syncs" USING btree ("connection_id","model");--> statement-breakpoint
CREATE INDEX "integration_syncs_scope_idx" ON "integration_syncs" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "integration_syncs_due_idx" ON "integration_syncs" USING btree ("next_run_at");