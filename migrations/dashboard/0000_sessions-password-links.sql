CREATE TABLE "dashboard_password_links" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"token_hash" text NOT NULL,
	"user_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "dashboard_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"secret_hash" text NOT NULL,
	"user_id" uuid NOT NULL,
	"ip" text,
	"user_agent" text,
	"created_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "dashboard_password_links_hash_uq" ON "dashboard_password_links" USING btree ("token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "dashboard_sessions_hash_uq" ON "dashboard_sessions" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "dashboard_sessions_user_idx" ON "dashboard_sessions" USING btree ("user_id");