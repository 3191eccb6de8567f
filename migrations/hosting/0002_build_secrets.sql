CREATE TABLE "build_secrets" (
	"project_id" uuid NOT NULL,
	"key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "build_secrets_project_id_key_pk" PRIMARY KEY("project_id","key")
);
--> statement-breakpoint
ALTER TABLE "build_secrets" ADD CONSTRAINT "build_secrets_project_id_key_secrets_project_id_key_fk" FOREIGN KEY ("project_id","key") REFERENCES "public"."secrets"("project_id","key") ON DELETE cascade ON UPDATE no action;