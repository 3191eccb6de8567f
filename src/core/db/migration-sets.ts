// Each area owns a folder of drizzle-kit migrations and its own journal table, so areas evolve
// independently and an area needing an optional extension (memory → vector) can be skipped alone.
// See docs/decisions/001-migrations-per-area.md.

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

export const migrationSets: MigrationSet[] = [
  { area: 'core', schema: ['src/core/**/tables.ts'] },
  { area: 'platform', schema: ['src/platform/tables.ts'] },
  { area: 'webhooks', schema: ['src/core/webhook-tables.ts'] },
  { area: 'v1', schema: ['src/v1/tables.ts'] },
  // hosting: app databases, deployments, app logs (references platform's projects and orgs)
  { area: 'hosting', schema: ['src/platform/runtime/tables.ts'] },
  { area: 'models', schema: ['src/platform/models-tables.ts'] },
  { area: 'dashboard', schema: ['src/dashboard/tables.ts'] },
  // Recall sets hnsw.iterative_scan (pgvector 0.8.0); halfvec indexes need 0.7.0.
  { area: 'memory', schema: ['src/v1/memory/tables.ts'], requires: 'vector', requiresVersion: '0.8.0' },
  { area: 'mail', schema: ['src/v1/mail/tables.ts'] },
];
