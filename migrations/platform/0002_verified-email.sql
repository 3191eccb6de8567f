CREATE TABLE "pending_memberships" (
	"org_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pending_memberships_org_id_user_id_pk" PRIMARY KEY("org_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "pending_memberships" ADD CONSTRAINT "pending_memberships_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pending_memberships" ADD CONSTRAINT "pending_memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pending_memberships_user_idx" ON "pending_memberships" USING btree ("user_id");--> statement-breakpoint
-- Accounts that existed before addresses were verified (docs/decisions/030-verified-email-senders.md): an
-- account someone has been using (it has a password or has held a personal token) keeps what it has and is
-- marked verified as of its creation; an account nobody has used yet (made by an invitation, a partner or
-- the operator) stays unverified and is proven by its first set-password link or operator login code.
UPDATE "users" SET "email_verified_at" = "created_at"
  WHERE "password_hash" IS NOT NULL
     OR "id" IN (SELECT "user_id" FROM "credentials" WHERE "kind" = 'pk' AND "user_id" IS NOT NULL);
