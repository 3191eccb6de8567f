import { date, integer, pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core';

// Daily rollups of what Pier records nowhere else (issue 39): v1 API requests and errors per organization
// and UTC day, counted in memory by each API node and added here every few seconds (src/core/api-usage.ts).
// Its own migration set `usage`; named apart from `tables.ts`, which the `core` set takes.

export const usageApiDaily = pgTable(
  'usage_api_daily',
  {
    orgId: uuid('org_id').notNull(),
    day: date('day').notNull(),
    requests: integer('requests').notNull().default(0),
    /** Answers with a 4xx or 5xx status. */
    errors: integer('errors').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.day] })],
);
