DROP TABLE "login_codes" CASCADE;--> statement-breakpoint
DROP TABLE "users" CASCADE;