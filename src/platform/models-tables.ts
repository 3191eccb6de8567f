import { date, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { orgs } from './tables.ts';

// Models area (migration set `models`): organizations' own provider keys, token usage, and the
// installation's embedder record.

/** Bring-your-own provider keys: encrypted with the keyring, never returned by any API but resolveModel. */
export const modelProviderKeys = pgTable(
  'model_provider_keys',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => orgs.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    keyEnc: text('key_enc').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.provider] })],
);

/** Token usage through the model proxy, one row per organization, environment, model and UTC day. */
export const modelUsage = pgTable(
  'model_usage',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => orgs.id, { onDelete: 'cascade' }),
    environment: text('environment').notNull(),
    model: text('model').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    requests: integer('requests').notNull().default(0),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    totalTokens: integer('total_tokens').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.environment, t.model, t.day] })],
);

/**
 * The embedder this installation stores vectors with (one row, id 'installation'). Its dimension is
 * fixed once recorded; a configured embedder different from this row is a change that needs re-embedding.
 */
export const modelEmbedder = pgTable('model_embedder', {
  id: text('id').primaryKey(),
  model: text('model').notNull(),
  dimension: integer('dimension').notNull(),
  recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
});
