CREATE TABLE "workflow_step_attempts" (
	"run_id" uuid NOT NULL,
	"step_id" text NOT NULL,
	"n" integer NOT NULL,
	"attempt" integer NOT NULL,
	"outcome" text NOT NULL,
	"input" jsonb,
	"error" text,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	CONSTRAINT "workflow_step_attempts_run_id_step_id_n_pk" PRIMARY KEY("run_id","step_id","n")
);
--> statement-breakpoint
CREATE TABLE "workflow_events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"payload" jsonb,
	"received_at" timestamp with time zone NOT NULL,
	"triggers_done_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "workflow_trigger_fires" ADD COLUMN "event_id" uuid;--> statement-breakpoint
ALTER TABLE "workflow_step_attempts" ADD CONSTRAINT "workflow_step_attempts_run_id_workflow_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."workflow_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "workflow_events_name_idx" ON "workflow_events" USING btree ("org_id","environment","name","received_at");--> statement-breakpoint
CREATE INDEX "workflow_events_pending_idx" ON "workflow_events" USING btree ("received_at") WHERE triggers_done_at is null;--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_trigger_fires_event_idx" ON "workflow_trigger_fires" USING btree ("event_id","workflow_id") WHERE event_id is not null;