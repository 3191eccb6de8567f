CREATE TABLE "integration_provider_webhook_tokens" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"connector_slug" text NOT NULL,
	"token_enc" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "integration_provider_webhook_tokens_idx" ON "integration_provider_webhook_tokens" USING btree ("connector_slug","id");