ALTER TABLE "mail_emails" ADD COLUMN "job_id" uuid;--> statement-breakpoint
CREATE INDEX "mail_emails_pending_idx" ON "mail_emails" USING btree ("updated_at") WHERE status IN ('queued', 'sending');