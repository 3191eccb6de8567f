CREATE TABLE "mail_emails" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"from" text NOT NULL,
	"from_address" text NOT NULL,
	"to" text[] NOT NULL,
	"to_addresses" text[] NOT NULL,
	"subject" text NOT NULL,
	"html" text,
	"text" text,
	"reply_to" text[],
	"template_id" uuid,
	"broadcast_id" uuid,
	"resent_from" uuid,
	"status" text NOT NULL,
	"failure_reason" text,
	"message_id" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"scheduled_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"sent_at" timestamp with time zone,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "mail_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigserial NOT NULL,
	"email_id" uuid NOT NULL,
	"type" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mail_outbox" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"from" text NOT NULL,
	"to" text[] NOT NULL,
	"subject" text NOT NULL,
	"html" text,
	"text" text,
	"headers" jsonb NOT NULL,
	"raw" text NOT NULL,
	"size" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mail_suppressions" (
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"address" text NOT NULL,
	"reason" text NOT NULL,
	"email_id" uuid,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "mail_suppressions_org_id_environment_address_pk" PRIMARY KEY("org_id","environment","address")
);
--> statement-breakpoint
CREATE TABLE "mail_templates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"subject" text NOT NULL,
	"html" text,
	"text" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mail_events" ADD CONSTRAINT "mail_events_email_id_mail_emails_id_fk" FOREIGN KEY ("email_id") REFERENCES "public"."mail_emails"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD CONSTRAINT "mail_outbox_email_id_mail_emails_id_fk" FOREIGN KEY ("email_id") REFERENCES "public"."mail_emails"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mail_emails_tenant_created_idx" ON "mail_emails" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "mail_emails_broadcast_idx" ON "mail_emails" USING btree ("broadcast_id") WHERE broadcast_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "mail_events_email_idx" ON "mail_events" USING btree ("email_id","seq");--> statement-breakpoint
CREATE INDEX "mail_outbox_tenant_idx" ON "mail_outbox" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "mail_templates_tenant_idx" ON "mail_templates" USING btree ("org_id","environment","created_at");