import {
  date,
  doublePrecision,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { orgs } from '../orgs/index.ts';

// Models area (migration set `models`): organizations' own provider keys, token usage, and each
// organization's embedder.

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

/**
 * Token usage and cost through the model proxy, one row per organization, environment, API key, model and
 * UTC day. `keyId` is '' for rows written before usage was kept per key. `costUsd` is priced when recorded
 * (models/prices.ts), so a later price change does not rewrite the past; null: the model has no price.
 */
export const modelUsage = pgTable(
  'model_usage',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => orgs.id, { onDelete: 'cascade' }),
    environment: text('environment').notNull(),
    keyId: text('key_id').notNull().default(''),
    model: text('model').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    requests: integer('requests').notNull().default(0),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    totalTokens: integer('total_tokens').notNull().default(0),
    costUsd: doublePrecision('cost_usd'),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.environment, t.keyId, t.model, t.day] })],
);

/**
 * Spending limits: a monthly budget in USD for the whole organization (keyId '') or for one API key, and a
 * key's model allow-list (null: any model). Checked by the proxy before each call (models/budgets.ts).
 */
export const modelLimits = pgTable(
  'model_limits',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => orgs.id, { onDelete: 'cascade' }),
    keyId: text('key_id').notNull(),
    monthlyBudgetUsd: doublePrecision('monthly_budget_usd'),
    allowedModels: text('allowed_models').array(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.keyId] })],
);

/**
 * Each organization's embedder (docs/decisions/025-per-org-embedders.md): the active one, whose vectors
 * recall searches, and a pending one while the `models.reembed` job rewrites the organization's vectors
 * (progress in reembedDone/reembedTotal). The switch from pending to active is one UPDATE, which also
 * increments `generation`.
 */
export const modelEmbedders = pgTable('model_embedders', {
  orgId: uuid('org_id')
    .primaryKey()
    .references(() => orgs.id, { onDelete: 'cascade' }),
  activeModel: text('active_model').notNull(),
  activeDimension: integer('active_dimension').notNull(),
  /** Counts switches; stores keep two vector slots and write the active one by its parity. */
  generation: integer('generation').notNull().default(0),
  pendingModel: text('pending_model'),
  reembedTotal: integer('reembed_total').notNull().default(0),
  reembedDone: integer('reembed_done').notNull().default(0),
  reembedStartedAt: timestamp('reembed_started_at', { withTimezone: true }),
  reembedError: text('reembed_error'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
