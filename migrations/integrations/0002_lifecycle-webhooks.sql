CREATE TABLE "integration_webhook_settings" (
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"url" text NOT NULL,
	"secret_enc" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "integration_webhook_settings_org_id_environment_pk" PRIMARY KEY("org_id","environment")
);
