CREATE TABLE "model_embedders" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"active_model" text NOT NULL,
	"active_dimension" integer NOT NULL,
	"pending_model" text,
	"reembed_total" integer DEFAULT 0 NOT NULL,
	"reembed_done" integer DEFAULT 0 NOT NULL,
	"reembed_started_at" timestamp with time zone,
	"reembed_error" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP TABLE "model_embedder" CASCADE;--> statement-breakpoint
ALTER TABLE "model_embedders" ADD CONSTRAINT "model_embedders_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;