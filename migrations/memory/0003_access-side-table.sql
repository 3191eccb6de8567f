CREATE TABLE "memory_access" (
	"memory_id" uuid PRIMARY KEY NOT NULL,
	"access_count" integer DEFAULT 0 NOT NULL,
	"recent_access_count" integer DEFAULT 0 NOT NULL,
	"last_accessed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "memory_access" ADD CONSTRAINT "memory_access_memory_id_memories_id_fk" FOREIGN KEY ("memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Recall's access counts move out of the wide memory rows (decision 092); the counts so far come along.
INSERT INTO "memory_access" ("memory_id", "access_count", "recent_access_count", "last_accessed_at")
SELECT "id", "access_count", "recent_access_count", "last_accessed_at" FROM "memories"
 WHERE "access_count" > 0 OR "recent_access_count" > 0 OR "last_accessed_at" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" DROP COLUMN "access_count";--> statement-breakpoint
ALTER TABLE "memories" DROP COLUMN "recent_access_count";--> statement-breakpoint
ALTER TABLE "memories" DROP COLUMN "last_accessed_at";