CREATE TABLE "integration_connections" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"connector_slug" text NOT NULL,
	"end_user_id" text NOT NULL,
	"redirect_url" text,
	"status" text NOT NULL,
	"status_reason" text,
	"external_account_id" text,
	"external_account_name" text,
	"tokens_enc" text,
	"token_expires_at" timestamp with time zone,
	"state_hash" text,
	"state_expires_at" timestamp with time zone,
	"pkce_verifier_enc" text,
	"refresh_lease_until" timestamp with time zone,
	"provider_meta" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "integration_connections_scope_idx" ON "integration_connections" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "integration_connections_state_idx" ON "integration_connections" USING btree ("state_hash");--> statement-breakpoint
CREATE INDEX "integration_connections_expiry_idx" ON "integration_connections" USING btree ("token_expires_at");