ALTER TABLE "mail_events" DROP CONSTRAINT "mail_events_email_id_mail_emails_id_fk";
--> statement-breakpoint
DROP INDEX "mail_events_email_idx";--> statement-breakpoint
ALTER TABLE "mail_events" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "mail_events" ADD CONSTRAINT "mail_events_email_id_seq_pk" PRIMARY KEY("email_id","seq");
