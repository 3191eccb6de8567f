CREATE TABLE "model_limits" (
	"org_id" uuid NOT NULL,
	"key_id" text NOT NULL,
	"monthly_budget_usd" double precision,
	"allowed_models" text[],
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "model_limits_org_id_key_id_pk" PRIMARY KEY("org_id","key_id")
);
--> statement-breakpoint
ALTER TABLE "model_usage" ADD COLUMN "key_id" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "model_usage" ADD COLUMN "cost_usd" double precision;--> statement-breakpoint
ALTER TABLE "model_usage" DROP CONSTRAINT "model_usage_org_id_environment_model_day_pk";--> statement-breakpoint
ALTER TABLE "model_usage" ADD CONSTRAINT "model_usage_org_id_environment_key_id_model_day_pk" PRIMARY KEY("org_id","environment","key_id","model","day");--> statement-breakpoint
ALTER TABLE "model_limits" ADD CONSTRAINT "model_limits_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;