import { sql } from 'drizzle-orm';
import { type EventPrecision, type Lineage, memories } from './tables.ts';

// The columns a reply needs (never the embedding's floats) and the reply shape.

// Which of a memory's two vector slots is active depends on its organization's embedder generation
// (vector-indexes.ts): the model of that slot is the memory's embeddingModel (the other slot's while a
// pending memory waits), and a null active vector means `pending`.
const oddGen = (t: string) =>
  `coalesce((SELECT e.generation FROM model_embedders e WHERE e.org_id = ${t}.org_id), 0) % 2 = 1`;
function activeModelSql(t: string): string {
  return `coalesce(CASE WHEN ${oddGen(t)} THEN ${t}.embedding_alt_model ELSE ${t}.embedding_model END,
    ${t}.embedding_model, ${t}.embedding_alt_model)`;
}
function statusSql(t: string): string {
  return `CASE WHEN (CASE WHEN ${oddGen(t)} THEN ${t}.embedding_alt ELSE ${t}.embedding END) IS NULL
    THEN 'pending' ELSE 'ready' END`;
}

// Access counts live in memory_access (decision 092): a memory never recalled has no row there.
export function accessCountSql(t: string): string {
  return `coalesce((SELECT a.access_count FROM memory_access a WHERE a.memory_id = ${t}.id), 0)`;
}
/** When the memory was last recalled; null when never. */
export function lastAccessedSql(t: string): string {
  return `(SELECT a.last_accessed_at FROM memory_access a WHERE a.memory_id = ${t}.id)`;
}

export const memoryColumns = {
  id: memories.id,
  orgId: memories.orgId,
  environment: memories.environment,
  content: memories.content,
  type: memories.type,
  tier: memories.tier,
  confidence: memories.confidence,
  accessCount: sql<number>`${sql.raw(accessCountSql('"memories"'))}`,
  tags: memories.tags,
  metadata: memories.metadata,
  agentId: memories.agentId,
  collectionId: memories.collectionId,
  embeddingModel: sql<string>`${sql.raw(activeModelSql('"memories"'))}`,
  embeddingStatus: sql<'ready' | 'pending'>`${sql.raw(statusSql('"memories"'))}`,
  contentHash: memories.contentHash,
  createdAt: memories.createdAt,
  updatedAt: memories.updatedAt,
  lastAccessedAt: sql<Date | string | null>`${sql.raw(lastAccessedSql('"memories"'))}`,
  eventAt: memories.eventAt,
  eventPrecision: memories.eventPrecision,
  validUntil: memories.validUntil,
  lineage: memories.lineage,
};

export type MemoryRow = {
  id: string;
  orgId?: string;
  environment?: string;
  content: string;
  type: (typeof memories.$inferSelect)['type'];
  tier: (typeof memories.$inferSelect)['tier'];
  confidence: number;
  accessCount: number;
  tags: string[];
  metadata: Record<string, unknown>;
  agentId: string | null;
  collectionId: string | null;
  embeddingModel: string;
  embeddingStatus: 'ready' | 'pending';
  contentHash: string;
  createdAt: Date;
  updatedAt: Date;
  lastAccessedAt: Date | string | null;
  eventAt: Date | string | null;
  eventPrecision: EventPrecision | null;
  validUntil: Date | string | null;
  lineage: Lineage | null;
};

const ACCESS_COUNT = `${accessCountSql('m')} AS "accessCount"`;
const LAST_ACCESSED = `${lastAccessedSql('m')} AS "lastAccessedAt", m.event_at AS "eventAt",
  m.event_precision AS "eventPrecision", m.valid_until AS "validUntil", m.lineage`;

/** The SQL select list for raw queries, aliased to MemoryRow's keys. */
export const MEMORY_SQL_COLUMNS = `m.id, m.content, m.type, m.tier, m.confidence, ${ACCESS_COUNT},
  m.tags, m.metadata, m.agent_id AS "agentId", m.collection_id AS "collectionId",
  ${activeModelSql('m')} AS "embeddingModel", ${statusSql('m')} AS "embeddingStatus", m.content_hash AS "contentHash", m.created_at AS "createdAt",
  m.updated_at AS "updatedAt", ${LAST_ACCESSED}`;

/**
 * MEMORY_SQL_COLUMNS for rows known to have a vector from `model` in `slot` (what recall returns): the
 * active model and `ready` need no look-up of the organization's generation per row.
 */
export function embeddedMemoryColumns(slotModelColumn: string, model: string): string {
  const lit = `'${model.replace(/'/g, "''")}'`;
  return `m.id, m.content, m.type, m.tier, m.confidence, ${ACCESS_COUNT},
  m.tags, m.metadata, m.agent_id AS "agentId", m.collection_id AS "collectionId",
  coalesce(m.${slotModelColumn}, ${lit}) AS "embeddingModel", 'ready' AS "embeddingStatus", m.content_hash AS "contentHash",
  m.created_at AS "createdAt", m.updated_at AS "updatedAt", ${LAST_ACCESSED}`;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function memoryView(r: MemoryRow) {
  return {
    id: r.id,
    content: r.content,
    type: r.type,
    tier: r.tier,
    // real is float4: round so 0.9 reads back as 0.9, not 0.8999999761581421.
    confidence: Math.round(Number(r.confidence) * 1e6) / 1e6,
    accessCount: Number(r.accessCount),
    tags: r.tags,
    metadata: r.metadata,
    agentId: r.agentId,
    collectionId: r.collectionId,
    embeddingModel: r.embeddingModel,
    /** `pending`: stored while the embedding provider was unavailable; not recalled until embedded. */
    embeddingStatus: r.embeddingStatus,
    createdAt: iso(r.createdAt)!,
    updatedAt: iso(r.updatedAt)!,
    lastAccessedAt: iso(r.lastAccessedAt),
    eventAt: iso(r.eventAt ?? null),
    eventPrecision: r.eventPrecision ?? null,
    validUntil: iso(r.validUntil ?? null),
    lineage: r.lineage ?? null,
  };
}

export type MemoryView = ReturnType<typeof memoryView>;
