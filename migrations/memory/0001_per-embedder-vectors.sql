DROP INDEX "memories_embedding_hnsw";--> statement-breakpoint
ALTER TABLE "memories" ALTER COLUMN "embedding" SET DATA TYPE vector;--> statement-breakpoint
ALTER TABLE "memories" ALTER COLUMN "embedding" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "embedding_status" text DEFAULT 'ready' NOT NULL;--> statement-breakpoint
CREATE INDEX "memories_pending_idx" ON "memories" USING btree ("org_id","created_at") WHERE "memories"."embedding_status" = 'pending';--> statement-breakpoint
-- Hand-written (docs/decisions/025): the HNSW index of the vectors stored so far, all from the local
-- embedder, now partial and cast to its size; indexes of other embedders are created on first use.
CREATE INDEX IF NOT EXISTS "memories_hnsw_d448a6206cd8_384" ON "memories" USING hnsw (("embedding"::vector(384)) vector_cosine_ops) WITH (m=16,ef_construction=64) WHERE "embedding_model" = 'pier-local/hash-384-v1';--> statement-breakpoint
-- Each organization that already stored memories keeps the embedder that made them as its active one.
INSERT INTO "model_embedders" ("org_id", "active_model", "active_dimension")
SELECT DISTINCT ON (m."org_id") m."org_id", m."embedding_model", vector_dims(m."embedding")
  FROM "memories" m WHERE m."org_id" IN (SELECT "id" FROM "orgs") AND m."embedding" IS NOT NULL
 ORDER BY m."org_id", m."created_at" DESC
ON CONFLICT DO NOTHING;
