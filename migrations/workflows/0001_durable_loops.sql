CREATE TABLE "workflow_loop_items" (
	"run_id" uuid NOT NULL,
	"step_id" text NOT NULL,
	"item_index" integer NOT NULL,
	"sub_step_id" text NOT NULL,
	"output" jsonb,
	"attempts" integer NOT NULL,
	"credits_used" double precision DEFAULT 0 NOT NULL,
	"completed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "workflow_loop_items_run_id_step_id_item_index_sub_step_id_pk" PRIMARY KEY("run_id","step_id","item_index","sub_step_id")
);
--> statement-breakpoint
ALTER TABLE "workflow_step_states" ADD COLUMN "crashes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "workflow_step_states" ADD COLUMN "completed_items" integer;--> statement-breakpoint
ALTER TABLE "workflow_step_states" ADD COLUMN "total_items" integer;--> statement-breakpoint
ALTER TABLE "workflow_loop_items" ADD CONSTRAINT "workflow_loop_items_run_id_workflow_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."workflow_runs"("id") ON DELETE cascade ON UPDATE no action;