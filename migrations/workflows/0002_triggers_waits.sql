CREATE TABLE "workflow_schedules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"workflow_id" uuid NOT NULL,
	"ref" text NOT NULL,
	"cron" text NOT NULL,
	"timezone" text NOT NULL,
	"overlap" text NOT NULL,
	"catch_up" boolean NOT NULL,
	"variables" jsonb NOT NULL,
	"since" timestamp with time zone NOT NULL,
	"last_slot" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "workflow_trigger_fires" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"workflow_id" uuid NOT NULL,
	"trigger" text NOT NULL,
	"ref" text NOT NULL,
	"slot" timestamp with time zone,
	"outcome" text NOT NULL,
	"run_id" uuid,
	"detail" text,
	"fired_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflow_waits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"step_id" text NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"kind" text NOT NULL,
	"event_name" text,
	"match" text,
	"due_at" timestamp with time zone,
	"error" text,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "trigger" jsonb DEFAULT '{"type":"api"}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "trigger_ref" text;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "held" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "concurrency_key" text;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "serial_key" text;--> statement-breakpoint
ALTER TABLE "workflows" ADD COLUMN "triggers" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "workflows" ADD COLUMN "limits" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "workflows" ADD COLUMN "hook_nonce" text;--> statement-breakpoint
ALTER TABLE "workflow_schedules" ADD CONSTRAINT "workflow_schedules_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_waits" ADD CONSTRAINT "workflow_waits_run_id_workflow_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."workflow_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_schedules_ref_idx" ON "workflow_schedules" USING btree ("workflow_id","ref");--> statement-breakpoint
CREATE INDEX "workflow_trigger_fires_wf_idx" ON "workflow_trigger_fires" USING btree ("workflow_id","trigger","ref","fired_at");--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_waits_step_idx" ON "workflow_waits" USING btree ("run_id","step_id");--> statement-breakpoint
CREATE INDEX "workflow_waits_event_idx" ON "workflow_waits" USING btree ("org_id","environment","event_name") WHERE kind = 'event';--> statement-breakpoint
CREATE INDEX "workflow_runs_held_idx" ON "workflow_runs" USING btree ("workflow_id","created_at") WHERE held;