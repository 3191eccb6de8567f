CREATE TABLE "memories" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"agent_id" uuid,
	"collection_id" uuid,
	"content" text NOT NULL,
	"content_hash" text NOT NULL,
	"type" text NOT NULL,
	"tier" text NOT NULL,
	"confidence" real NOT NULL,
	"access_count" integer DEFAULT 0 NOT NULL,
	"recent_access_count" integer DEFAULT 0 NOT NULL,
	"tags" text[] DEFAULT '{}' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"embedding" vector(384) NOT NULL,
	"search_tsv" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
	"embedding_model" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_accessed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "memory_agents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"instructions" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memory_collections" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"compaction_enabled" boolean DEFAULT false NOT NULL,
	"compaction_strategy" text DEFAULT 'summarize' NOT NULL,
	"compaction_threshold" real NOT NULL,
	"compaction_trigger_count" integer NOT NULL,
	"last_compaction_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memory_compaction_jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"collection_id" uuid NOT NULL,
	"status" text NOT NULL,
	"strategy" text NOT NULL,
	"threshold" real NOT NULL,
	"trigger" text NOT NULL,
	"memories_processed" integer DEFAULT 0 NOT NULL,
	"memories_created" integer DEFAULT 0 NOT NULL,
	"memories_archived" integer DEFAULT 0 NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "memory_history" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"memory_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"environment" text NOT NULL,
	"content" text NOT NULL,
	"type" text NOT NULL,
	"tier" text NOT NULL,
	"confidence" real NOT NULL,
	"tags" text[] NOT NULL,
	"metadata" jsonb NOT NULL,
	"event" text NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_agent_id_memory_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."memory_agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_collection_id_memory_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."memory_collections"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_compaction_jobs" ADD CONSTRAINT "memory_compaction_jobs_collection_id_memory_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."memory_collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_history" ADD CONSTRAINT "memory_history_memory_id_memories_id_fk" FOREIGN KEY ("memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memories_embedding_hnsw" ON "memories" USING hnsw ("embedding" vector_cosine_ops) WITH (m=16,ef_construction=64);--> statement-breakpoint
CREATE INDEX "memories_scope_idx" ON "memories" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "memories_agent_idx" ON "memories" USING btree ("agent_id","created_at");--> statement-breakpoint
CREATE INDEX "memories_hash_idx" ON "memories" USING btree ("content_hash");--> statement-breakpoint
CREATE INDEX "memories_collection_idx" ON "memories" USING btree ("collection_id","created_at");--> statement-breakpoint
CREATE INDEX "memories_metadata_gin" ON "memories" USING gin ("metadata" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "memories_tags_gin" ON "memories" USING gin ("tags");--> statement-breakpoint
CREATE INDEX "memories_fts_gin" ON "memories" USING gin ("search_tsv");--> statement-breakpoint
CREATE UNIQUE INDEX "memories_dedup_uq" ON "memories" USING btree ("org_id","environment",coalesce("agent_id", '00000000-0000-0000-0000-000000000000'::uuid),coalesce("collection_id", '00000000-0000-0000-0000-000000000000'::uuid),"content_hash") WHERE "memories"."tier" <> 'archived';--> statement-breakpoint
CREATE INDEX "memory_agents_scope_idx" ON "memory_agents" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "memory_collections_scope_idx" ON "memory_collections" USING btree ("org_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "memory_compaction_jobs_collection_idx" ON "memory_compaction_jobs" USING btree ("collection_id","created_at");--> statement-breakpoint
CREATE INDEX "memory_history_memory_idx" ON "memory_history" USING btree ("memory_id","valid_to");