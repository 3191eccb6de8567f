import { bigserial, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { integrationConnections } from './tables.ts';

// Per-connection logs of provider calls (migration set 'integrations'): what was called and how it went,
// never a secret (query values that look like credentials are redacted before a row is written). Kept
// bounded per connection (call-logs.ts).

export const integrationCallLogs = pgTable(
  'integration_call_logs',
  {
    /** Insertion order: the newest first, and what pruning keeps. */
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    connectionId: uuid('connection_id')
      .notNull()
      .references(() => integrationConnections.id, { onDelete: 'cascade' }),
    method: text('method').notNull(),
    host: text('host').notNull(),
    /** Path and query, credentials redacted. */
    path: text('path').notNull(),
    /** The provider's HTTP status; null when no answer came (timeout, refused connection). */
    status: integer('status'),
    durationMs: integer('duration_ms').notNull(),
    /** Why no answer came (Pier's error code), or null. */
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('integration_call_logs_conn_idx').on(t.connectionId, t.id)],
);
