-- Recall reads memories through their GIN indexes on every call (decision 070). With fastupdate on, new
-- entries wait in a pending list that every scan reads in full, and only VACUUM empties it: PGlite has no
-- autovacuum and its maintenance pass skips index cleanup on tables with an HNSW index, so the list grew to
-- its 4 MB limit and one keyword leg spent 130 ms reading it. Entries now go straight into the tree.
ALTER INDEX "memories_fts_gin" SET (fastupdate = off);
--> statement-breakpoint
ALTER INDEX "memories_tags_gin" SET (fastupdate = off);
--> statement-breakpoint
ALTER INDEX "memories_metadata_gin" SET (fastupdate = off);
--> statement-breakpoint
SELECT gin_clean_pending_list('memories_fts_gin'::regclass), gin_clean_pending_list('memories_tags_gin'::regclass),
       gin_clean_pending_list('memories_metadata_gin'::regclass);
--> statement-breakpoint
-- Free space in each page lets recall's access counting update a row in place (a HOT update), instead of
-- writing a new version that every index — the HNSW graph included — must index again. Applies to pages
-- written from now on.
ALTER TABLE "memories" SET (fillfactor = 80);
