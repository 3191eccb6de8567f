import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { integrationConnections } from './tables.ts';

// Syncs (migration set 'integrations', decision 134): a connection's unified records copied into Pier on a
// schedule, so an app reads them without calling the provider and asks what changed since a time. A sync
// goes through the provider's list in passes; a pass may span several runs (a run that fails keeps the
// pass's cursor and the next run resumes there). Records the pass did not see are deletes, found once the
// pass is complete (full-refresh compare: the unified lists have no change feed).

export type SyncModel = 'contacts' | 'companies' | 'deals' | 'files';
export type SyncRunStatus = 'running' | 'succeeded' | 'failed';

const ts = (name: string) => timestamp(name, { withTimezone: true });

export const integrationSyncs = pgTable(
  'integration_syncs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').$type<'production' | 'sandbox'>().notNull(),
    connectionId: uuid('connection_id')
      .notNull()
      .references(() => integrationConnections.id, { onDelete: 'cascade' }),
    model: text('model').$type<SyncModel>().notNull(),
    frequencyMinutes: integer('frequency_minutes').notNull(),
    paused: boolean('paused').notNull().default(false),
    nextRunAt: ts('next_run_at').notNull(),
    /** The pass under way: its id marks the records it saw, its cursor is where the next page starts. */
    passId: uuid('pass_id'),
    passCursor: text('pass_cursor'),
    /** One run at a time per sync across workers: whoever sets this lease runs. */
    leaseUntil: ts('lease_until'),
    lastRunAt: ts('last_run_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('integration_syncs_connection_model_idx').on(t.connectionId, t.model),
    index('integration_syncs_scope_idx').on(t.orgId, t.environment, t.createdAt),
    index('integration_syncs_due_idx').on(t.nextRunAt),
  ],
);

export const integrationSyncRuns = pgTable(
  'integration_sync_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    syncId: uuid('sync_id')
      .notNull()
      .references(() => integrationSyncs.id, { onDelete: 'cascade' }),
    status: text('status').$type<SyncRunStatus>().notNull(),
    /** Whether this run went on with a pass an earlier run left unfinished. */
    resumed: boolean('resumed').notNull().default(false),
    pages: integer('pages').notNull().default(0),
    added: integer('added').notNull().default(0),
    updated: integer('updated').notNull().default(0),
    deleted: integer('deleted').notNull().default(0),
    errorCode: text('error_code'),
    error: text('error'),
    startedAt: ts('started_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('integration_sync_runs_sync_idx').on(t.syncId, t.startedAt)],
);

/** The synced records: the unified record as last seen, and when Pier saw it change (modifiedAt). */
export const integrationRecords = pgTable(
  'integration_records',
  {
    connectionId: uuid('connection_id')
      .notNull()
      .references(() => integrationConnections.id, { onDelete: 'cascade' }),
    model: text('model').$type<SyncModel>().notNull(),
    externalId: text('external_id').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    /** sha-256 of the record as stored: an unchanged record is not rewritten and not reported. */
    hash: text('hash').notNull(),
    lastAction: text('last_action').$type<'added' | 'updated' | 'deleted'>().notNull(),
    firstSeenAt: ts('first_seen_at').notNull(),
    modifiedAt: ts('modified_at').notNull(),
    deletedAt: ts('deleted_at'),
    seenPass: uuid('seen_pass').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.connectionId, t.model, t.externalId] }),
    index('integration_records_modified_idx').on(t.connectionId, t.model, t.modifiedAt, t.externalId),
  ],
);
