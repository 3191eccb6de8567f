import { and, count, desc, eq, inArray, sql } from 'drizzle-orm';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { MemoryContext, Scope } from './context.ts';
import { memoryErrors } from './errors.ts';
import type { CreateCollectionInput, DeleteCollectionOptions, UpdateCollectionInput } from './schema.ts';
import { MEMORY_TIERS, MEMORY_TYPES } from './schema.ts';
import { memories, memoryCollections } from './tables.ts';

type CollectionRow = typeof memoryCollections.$inferSelect;

export const COMPACTION_DEFAULTS = { strategy: 'summarize', threshold: 0.8, triggerCount: 100 } as const;

/**
 * The threshold as stored: six decimals, the precision the view answers. The column is a float4, which
 * refuses a value under its smallest normal (1e-38, "value out of range: underflow"), and 0 ≤ t ≤ 1 lets
 * a client send 1e-230.
 */
const storedThreshold = (t: number) => Math.round(t * 1e6) / 1e6;

export function collectionView(r: CollectionRow, memoryCount: number) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    compactionEnabled: r.compactionEnabled,
    compactionConfig: {
      strategy: r.compactionStrategy,
      threshold: Math.round(r.compactionThreshold * 1e6) / 1e6,
      triggerCount: r.compactionTriggerCount,
    },
    memoryCount,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    lastCompactionAt: r.lastCompactionAt?.toISOString() ?? null,
  };
}

const inScope = (s: Scope) =>
  and(eq(memoryCollections.orgId, s.orgId), eq(memoryCollections.environment, s.environment));

export async function requireCollection(ctx: MemoryContext, s: Scope, id: string): Promise<CollectionRow> {
  if (!isUuid(id)) throw memoryErrors.collectionNotFound();
  const [row] = await ctx.deps.db.orm
    .select()
    .from(memoryCollections)
    .where(and(inScope(s), eq(memoryCollections.id, id)));
  if (!row) throw memoryErrors.collectionNotFound();
  return row;
}

async function memoryCounts(ctx: MemoryContext, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await ctx.deps.db.orm
    .select({ id: memories.collectionId, n: count() })
    .from(memories)
    .where(inArray(memories.collectionId, ids))
    .groupBy(memories.collectionId);
  return new Map(rows.map((r) => [r.id!, Number(r.n)]));
}

export async function createCollection(ctx: MemoryContext, s: Scope, input: CreateCollectionInput) {
  const now = ctx.deps.clock.now();
  const cfg = { ...COMPACTION_DEFAULTS, ...input.compactionConfig };
  const [row] = await ctx.deps.db.orm
    .insert(memoryCollections)
    .values({
      orgId: s.orgId,
      environment: s.environment,
      name: input.name,
      description: input.description ?? null,
      compactionEnabled: input.compactionEnabled,
      compactionStrategy: cfg.strategy,
      compactionThreshold: storedThreshold(cfg.threshold),
      compactionTriggerCount: cfg.triggerCount,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return collectionView(row!, 0);
}

export async function getCollection(ctx: MemoryContext, s: Scope, id: string) {
  const row = await requireCollection(ctx, s, id);
  return collectionView(row, (await memoryCounts(ctx, [row.id])).get(row.id) ?? 0);
}

export async function listCollections(ctx: MemoryContext, s: Scope, q: { limit: number; offset: number }) {
  const db = ctx.deps.db.orm;
  const rows = await db
    .select()
    .from(memoryCollections)
    .where(inScope(s))
    .orderBy(desc(memoryCollections.createdAt), desc(memoryCollections.id))
    .limit(q.limit)
    .offset(q.offset);
  const [{ n }] = (await db.select({ n: count() }).from(memoryCollections).where(inScope(s))) as [
    { n: number },
  ];
  const counts = await memoryCounts(
    ctx,
    rows.map((r) => r.id),
  );
  return offsetPage(
    rows.map((r) => collectionView(r, counts.get(r.id) ?? 0)),
    Number(n),
    q,
  );
}

export async function updateCollection(
  ctx: MemoryContext,
  s: Scope,
  id: string,
  input: UpdateCollectionInput,
) {
  await requireCollection(ctx, s, id);
  const c = input.compactionConfig;
  const [row] = await ctx.deps.db.orm
    .update(memoryCollections)
    .set({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.compactionEnabled !== undefined ? { compactionEnabled: input.compactionEnabled } : {}),
      ...(c?.strategy !== undefined ? { compactionStrategy: c.strategy } : {}),
      ...(c?.threshold !== undefined ? { compactionThreshold: storedThreshold(c.threshold) } : {}),
      ...(c?.triggerCount !== undefined ? { compactionTriggerCount: c.triggerCount } : {}),
      updatedAt: ctx.deps.clock.now(),
    })
    .where(and(inScope(s), eq(memoryCollections.id, id)))
    .returning();
  return collectionView(row!, (await memoryCounts(ctx, [id])).get(id) ?? 0);
}

/**
 * Deletes a collection. Its memories are kept without a collection (default), deleted, or moved to
 * another collection of the same scope.
 */
export async function deleteCollection(
  ctx: MemoryContext,
  s: Scope,
  id: string,
  opts: DeleteCollectionOptions,
) {
  await requireCollection(ctx, s, id);
  if (opts.memories === 'reassign') {
    if (!opts.targetCollectionId) throw errors.validation("memories: 'reassign' needs a targetCollectionId.");
    if (opts.targetCollectionId === id)
      throw errors.validation('targetCollectionId must be another collection.');
    await requireCollection(ctx, s, opts.targetCollectionId);
  }
  await ctx.deps.db.orm.transaction(async (tx) => {
    const mine = and(
      eq(memories.orgId, s.orgId),
      eq(memories.environment, s.environment),
      eq(memories.collectionId, id),
    );
    if (opts.memories === 'delete') await tx.delete(memories).where(mine);
    else if (opts.memories === 'reassign') {
      // An exact duplicate already in the target stays single: archive the incoming copy first.
      await tx.execute(sql`
        UPDATE memories m SET tier = 'archived', updated_at = now()
         WHERE m.collection_id = ${id} AND m.tier <> 'archived'
           AND EXISTS (SELECT 1 FROM memories t
                        WHERE t.collection_id = ${opts.targetCollectionId!} AND t.tier <> 'archived'
                          AND t.org_id = m.org_id AND t.environment = m.environment
                          AND t.content_hash = m.content_hash
                          AND t.agent_id IS NOT DISTINCT FROM m.agent_id)`);
      await tx.update(memories).set({ collectionId: opts.targetCollectionId! }).where(mine);
    }
    await tx.delete(memoryCollections).where(and(inScope(s), eq(memoryCollections.id, id)));
  });
  return { success: true };
}

export async function collectionStats(ctx: MemoryContext, s: Scope, id: string) {
  const row = await requireCollection(ctx, s, id);
  const { rows } = await ctx.deps.db.query<{ tier: string; type: string; n: string; bytes: string }>(
    `SELECT tier, type, count(*)::text AS n,
            coalesce(sum(octet_length(content) + coalesce(pg_column_size(embedding), 0) + coalesce(pg_column_size(embedding_alt), 0) + pg_column_size(metadata)
                         + pg_column_size(tags)), 0)::text AS bytes
       FROM memories WHERE collection_id = $1 AND org_id = $2 AND environment = $3
      GROUP BY tier, type`,
    [id, s.orgId, s.environment],
  );
  const byTier = Object.fromEntries(MEMORY_TIERS.map((t) => [t, 0])) as Record<string, number>;
  const byType = Object.fromEntries(MEMORY_TYPES.map((t) => [t, 0])) as Record<string, number>;
  let total = 0;
  let bytes = 0;
  for (const r of rows) {
    const n = Number(r.n);
    byTier[r.tier] = (byTier[r.tier] ?? 0) + n;
    byType[r.type] = (byType[r.type] ?? 0) + n;
    total += n;
    bytes += Number(r.bytes);
  }
  return {
    totalMemories: total,
    byTier,
    byType,
    storageBytes: bytes,
    lastCompactionAt: row.lastCompactionAt?.toISOString() ?? null,
  };
}
