import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  real,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

// Memory's tables (migration set 'memory', which needs the pgvector extension). Every row carries its
// organization and environment; every query filters on both.

export type MemoryType = 'episodic' | 'semantic' | 'procedural' | 'identity';
export type MemoryTier = 'hot' | 'warm' | 'cold' | 'archived';
export type Environment = 'production' | 'sandbox';
/** How much of time a memory's `eventAt` stands for: the instant, or the day, week, month or year it starts. */
export type EventPrecision = 'instant' | 'day' | 'week' | 'month' | 'year';
/** Inference's decisions (mem0's vocabulary), recorded in memory_history.decision. */
export type InferDecision = 'ADD' | 'UPDATE' | 'DELETE' | 'NONE';
export type HistoryEvent =
  | 'updated'
  | 'archived'
  | 'compacted'
  | 'added'
  | 'superseded'
  | 'deleted'
  | 'confirmed';

/** Where a memory came from and what it replaced (docs/memory.md, "Inference"). */
export type Lineage = {
  /** The message it was extracted from: its place in the call, role, the client's id, time and an excerpt. */
  source?: { index: number; role: string; id?: string; at?: string; excerpt: string };
  /** The memories it superseded (archived by an UPDATE), with what they said. */
  supersedes?: { id: string; content: string }[];
  /** The memory that superseded this one. */
  supersededBy?: { id: string; content: string };
  /** The model that extracted or reconciled it (`pier-rules/v1` for the deterministic fallback). */
  model?: string;
};

const ts = (name: string) => timestamp(name, { withTimezone: true });
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });
/**
 * pgvector's `vector` without a dimension: each memory's embedder decides it, and the per-embedder partial
 * HNSW indexes cast to the fixed size (vector-indexes.ts; docs/decisions/025-per-org-embedders.md).
 */
const anyVector = customType<{ data: number[]; driverData: string }>({
  dataType: () => 'vector',
  toDriver: (v) => `[${v.join(',')}]`,
  fromDriver: (v) => JSON.parse(String(v)) as number[],
});

export const memoryAgents = pgTable(
  'memory_agents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    name: text('name').notNull(),
    description: text('description'),
    instructions: text('instructions'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /** Adds through `POST /memories/add` infer facts unless the call says `infer: false`. */
    infer: boolean('infer').notNull().default(false),
    /** The model that infers for this agent (`provider/model`); null: the call's, else TEXT_MODEL, else rules. */
    inferModel: text('infer_model'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('memory_agents_scope_idx').on(t.orgId, t.environment, t.createdAt)],
);

export const memoryCollections = pgTable(
  'memory_collections',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    name: text('name').notNull(),
    description: text('description'),
    compactionEnabled: boolean('compaction_enabled').notNull().default(false),
    compactionStrategy: text('compaction_strategy').notNull().default('summarize'),
    compactionThreshold: real('compaction_threshold').notNull(),
    /** Memories written since the last compaction that make an enabled collection compact itself. */
    compactionTriggerCount: integer('compaction_trigger_count').notNull(),
    lastCompactionAt: ts('last_compaction_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('memory_collections_scope_idx').on(t.orgId, t.environment, t.createdAt)],
);

export const memories = pgTable(
  'memories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    agentId: uuid('agent_id').references(() => memoryAgents.id, { onDelete: 'cascade' }),
    collectionId: uuid('collection_id').references(() => memoryCollections.id, { onDelete: 'set null' }),
    content: text('content').notNull(),
    contentHash: text('content_hash').notNull(),
    type: text('type').$type<MemoryType>().notNull(),
    tier: text('tier').$type<MemoryTier>().notNull(),
    confidence: real('confidence').notNull(),
    tags: text('tags').array().notNull().default([]),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    // Two vector slots (docs/decisions/025): the organization's embedder generation picks the active one
    // (even → embedding, odd → embedding_alt); a re-embedding fills the other, and the switch flips the
    // generation. A null active vector is a memory stored `pending` (its provider was down).
    embedding: anyVector('embedding'),
    embeddingModel: text('embedding_model'),
    embeddingAlt: anyVector('embedding_alt'),
    embeddingAltModel: text('embedding_alt_model'),
    /** Stored so keyword ranking does not re-parse every matching row's content. */
    searchTsv: tsvector('search_tsv').generatedAlwaysAs(sql`to_tsvector('english', content)`),
    /** When what the memory says happened (or began to hold); null when neither told nor found in the text. */
    eventAt: ts('event_at'),
    eventPrecision: text('event_precision').$type<EventPrecision>(),
    /** When a superseded or deleted fact stopped holding (Zep's invalid_at); null while it holds. */
    validUntil: ts('valid_until'),
    lineage: jsonb('lineage').$type<Lineage>(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // The HNSW indexes are partial, one per embedder and slot, created on first use (vector-indexes.ts).
    index('memories_scope_idx').on(t.orgId, t.environment, t.createdAt),
    index('memories_agent_idx').on(t.agentId, t.createdAt),
    index('memories_hash_idx').on(t.contentHash),
    index('memories_collection_idx').on(t.collectionId, t.createdAt),
    index('memories_event_idx').on(t.orgId, t.environment, t.eventAt),
    index('memories_metadata_gin').using('gin', sql`${t.metadata} jsonb_path_ops`),
    index('memories_tags_gin').using('gin', t.tags),
    index('memories_fts_gin').using('gin', t.searchTsv),
    // Exact duplicates are stored once per org, environment, agent and collection (archived ones aside).
    uniqueIndex('memories_dedup_uq')
      .on(
        t.orgId,
        t.environment,
        sql`coalesce(${t.agentId}, '00000000-0000-0000-0000-000000000000'::uuid)`,
        sql`coalesce(${t.collectionId}, '00000000-0000-0000-0000-000000000000'::uuid)`,
        t.contentHash,
      )
      .where(sql`${t.tier} <> 'archived'`),
  ],
);

/**
 * How often and when each memory was recalled, apart from the memory's row (decision 092): recall counts
 * its results every 200 ms, and rewriting the wide memory rows (content, vectors) for that left dead
 * versions for every recall to step over and, when a row did not fit its page, new entries in every index
 * (the HNSW graph included). A memory never recalled has no row here.
 */
export const memoryAccess = pgTable('memory_access', {
  memoryId: uuid('memory_id')
    .primaryKey()
    .references(() => memories.id, { onDelete: 'cascade' }),
  accessCount: integer('access_count').notNull().default(0),
  /** Accesses since the last tier run (halved each run); drives promotion to hot. */
  recentAccessCount: integer('recent_access_count').notNull().default(0),
  lastAccessedAt: ts('last_accessed_at'),
});

export const memoryHistory = pgTable(
  'memory_history',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    memoryId: uuid('memory_id')
      .notNull()
      .references(() => memories.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    /** What the memory said (and was) before the change. */
    content: text('content').notNull(),
    type: text('type').$type<MemoryType>().notNull(),
    tier: text('tier').$type<MemoryTier>().notNull(),
    confidence: real('confidence').notNull(),
    tags: text('tags').array().notNull(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull(),
    event: text('event').$type<HistoryEvent>().notNull(),
    validFrom: ts('valid_from').notNull(),
    validTo: ts('valid_to').notNull(),
    /** Inference's decision and why (null for edits, archiving and compaction). */
    decision: text('decision').$type<InferDecision>(),
    reason: text('reason'),
    /** The memory the decision links to: the superseding one, or the one superseded. No foreign key: either may be deleted later. */
    relatedMemoryId: uuid('related_memory_id'),
    model: text('model'),
    /** Write order: entries written at one instant (one memory.add call) read back in the order they were made. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
  },
  (t) => [index('memory_history_memory_idx').on(t.memoryId, t.validTo)],
);

export const memoryCompactionJobs = pgTable(
  'memory_compaction_jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    collectionId: uuid('collection_id')
      .notNull()
      .references(() => memoryCollections.id, { onDelete: 'cascade' }),
    status: text('status').$type<'pending' | 'processing' | 'completed' | 'failed'>().notNull(),
    strategy: text('strategy').notNull(),
    threshold: real('threshold').notNull(),
    trigger: text('trigger').$type<'manual' | 'auto'>().notNull(),
    memoriesProcessed: integer('memories_processed').notNull().default(0),
    memoriesCreated: integer('memories_created').notNull().default(0),
    memoriesArchived: integer('memories_archived').notNull().default(0),
    error: text('error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    startedAt: ts('started_at'),
    completedAt: ts('completed_at'),
  },
  (t) => [index('memory_compaction_jobs_collection_idx').on(t.collectionId, t.createdAt)],
);
