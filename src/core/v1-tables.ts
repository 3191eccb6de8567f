import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

// Tables every v1 area shares: the per-key token buckets (src/http/v1-rate-limit.ts) and the Idempotency-Key
// records (src/http/idempotency.ts). Named apart from `tables.ts`: they are their own migration set `v1`,
// and the `core` set takes every `tables.ts` under src/core.

/** One token bucket per API key, shared by every API node through the database. */
export const v1RateBuckets = pgTable('v1_rate_buckets', {
  key: text('key').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  updatedMs: bigint('updated_ms', { mode: 'number' }).notNull(),
  allowed: boolean('allowed').notNull().default(true),
});

/**
 * The first response to a POST with an Idempotency-Key, replayed for 24 h to the same organization and
 * environment. `status` null means the first request is still running.
 */
export const v1Idempotency = pgTable(
  'v1_idempotency',
  {
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    status: integer('status'),
    contentType: text('content_type'),
    response: text('response'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.environment, t.key] }),
    index('v1_idempotency_created_idx').on(t.createdAt),
  ],
);
