// Each area owns a folder of drizzle-kit migrations and its own journal table, so areas evolve
// independently and an area needing an optional extension (memory → vector) can be skipped alone.
// Each area's manifest declares its sets (src/areas/index.ts lists them in order); see
// docs/decisions/001-migrations-per-area.md.

export type MigrationSet = {
  area: string;
  /** Globs of the drizzle table files that drizzle-kit reads for this set. */
  schema: string[];
  /** A Postgres extension the set cannot run without; missing → the set is skipped and recorded. */
  requires?: string;
  /**
   * The oldest version of `requires` the set works with. An older one installed stops start-up with an error
   * naming both versions, rather than a SQL error at the first query that needs the newer feature.
   */
  requiresVersion?: string;
};
