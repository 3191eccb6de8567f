import { and, asc, count, desc, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import { isUniqueViolation } from '../../core/db/pg-errors.ts';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import { requireAgent } from './agents.ts';
import { requireCollection } from './collections.ts';
import { maybeAutoCompact } from './compaction.ts';
import type { MemoryContext, Scope } from './context.ts';
import { contentHash } from './embedding.ts';
import { memoryErrors } from './errors.ts';
import { type MemoryRow, memoryColumns, memoryView } from './memory-view.ts';
import { vectorColumns, writeEmbedded } from './org-embedder.ts';
import type { ListMemoriesInput, StoreMemoryInput, UpdateMemoryInput } from './schema.ts';
import { type Lineage, memories, memoryHistory } from './tables.ts';
import { termStatsChanged } from './term-stats.ts';
import { type EventTime, eventTimeOf } from './time-expressions.ts';

// Memories: store (single and batch, with exact-duplicate folding), read, list, update (with history and
// re-embedding), delete. Recall and keyword search live in recall.ts.

/** New memories start warm: included in default recall, promoted to hot by use (tiers.ts). */
export const INITIAL_TIER = 'warm' as const;

/** What a client stores; inference (inference.ts) adds the fact's lineage and its resolved event time. */
export type StoreItem = Omit<StoreMemoryInput, 'agentId'> & {
  lineage?: Lineage;
  eventTime?: EventTime | null;
};

const inScope = (s: Scope) => and(eq(memories.orgId, s.orgId), eq(memories.environment, s.environment));
const sameRef = (col: typeof memories.agentId | typeof memories.collectionId, v: string | null) =>
  v === null ? isNull(col) : eq(col, v);

function cleanTags(tags: string[] | undefined): string[] {
  return [...new Set((tags ?? []).map((t) => t.trim()).filter(Boolean))];
}

export async function requireMemory(ctx: MemoryContext, s: Scope, id: string): Promise<MemoryRow> {
  if (!isUuid(id)) throw memoryErrors.memoryNotFound();
  const [row] = await ctx.deps.db.orm
    .select(memoryColumns)
    .from(memories)
    .where(and(inScope(s), eq(memories.id, id)));
  if (!row) throw memoryErrors.memoryNotFound();
  return row;
}

async function findActiveDuplicate(
  ctx: MemoryContext,
  s: Scope,
  agentId: string | null,
  collectionId: string | null,
  hash: string,
): Promise<MemoryRow | undefined> {
  const [row] = await ctx.deps.db.orm
    .select(memoryColumns)
    .from(memories)
    .where(
      and(
        inScope(s),
        sameRef(memories.agentId, agentId),
        sameRef(memories.collectionId, collectionId),
        eq(memories.contentHash, hash),
        sql`${memories.tier} <> 'archived'`,
      ),
    );
  return row;
}

/**
 * Confidence as stored: six decimals, the precision memoryView answers. The column is a float4, which
 * refuses a value under its smallest normal (1e-38, "value out of range: underflow"), and 0 ≤ c ≤ 1 lets
 * a client send 1e-300.
 */
const storedConfidence = (c: number) => Math.round(c * 1e6) / 1e6;

/** An exact duplicate folds into the existing memory, whose confidence becomes the higher of the two. */
async function foldDuplicate(
  ctx: MemoryContext,
  existing: MemoryRow,
  confidence: number,
): Promise<MemoryRow> {
  if (confidence <= existing.confidence) return existing;
  await ctx.deps.db.orm.update(memories).set({ confidence }).where(eq(memories.id, existing.id));
  return { ...existing, confidence };
}

/**
 * Stores memories for one agent (or none). Items whose content already exists (same agent and collection,
 * not archived) are not stored twice: the existing memory is returned instead.
 */
export async function storeMemories(
  ctx: MemoryContext,
  s: Scope,
  agentId: string | undefined,
  items: StoreItem[],
): Promise<{ created: number; memories: ReturnType<typeof memoryView>[]; createdFlags: boolean[] }> {
  if (agentId !== undefined) await requireAgent(ctx, s, agentId);
  const collectionIds = [...new Set(items.map((i) => i.collectionId).filter((c): c is string => !!c))];
  for (const c of collectionIds) await requireCollection(ctx, s, c);
  const agent = agentId ?? null;
  const now = ctx.deps.clock.now();
  // The client's text is stored as sent; duplicates are found by the hash of its normalised form.
  const prepared = items.map((i) => ({
    ...i,
    hash: contentHash(i.content),
    collection: i.collectionId ?? null,
    time: i.eventTime !== undefined ? i.eventTime : eventTimeOf(i, now),
  }));
  const key = (p: { hash: string; collection: string | null }) => `${p.collection ?? ''}|${p.hash}`;

  // Existing active duplicates, found in one query by the hash index alone (scope is checked here):
  // with stale statistics a scope condition can lure the planner into scanning the whole scope.
  const hashes = [...new Set(prepared.map((p) => p.hash))];
  const existing = (
    await ctx.deps.db.orm.select(memoryColumns).from(memories).where(inArray(memories.contentHash, hashes))
  ).filter(
    (r) =>
      r.orgId === s.orgId && r.environment === s.environment && r.agentId === agent && r.tier !== 'archived',
  );
  const byKey = new Map<string, MemoryRow>(
    existing.map((r) => [key({ hash: r.contentHash, collection: r.collectionId }), r]),
  );

  // Items new to the store (first occurrence of each key within the batch).
  const fresh = new Map<string, (typeof prepared)[number]>();
  for (const p of prepared) if (!byKey.has(key(p)) && !fresh.has(key(p))) fresh.set(key(p), p);
  const toInsert = [...fresh.values()];
  const insertedKeys = new Set<string>();
  // One embeddings call for the whole batch, then one insert.
  const rows = await writeEmbedded(
    ctx,
    s,
    toInsert.map((p) => p.content),
    (tx, e) =>
      e
        ? tx
            .insert(memories)
            .values(
              toInsert.map((p, i) => ({
                orgId: s.orgId,
                environment: s.environment,
                agentId: agent,
                collectionId: p.collection,
                content: p.content,
                contentHash: p.hash,
                type: p.type,
                tier: INITIAL_TIER,
                confidence: storedConfidence(p.confidence),
                tags: cleanTags(p.tags),
                metadata: p.metadata ?? {},
                eventAt: p.time?.at ?? null,
                eventPrecision: p.time?.precision ?? null,
                lineage: p.lineage ?? null,
                ...vectorColumns(e, i),
                createdAt: now,
                updatedAt: now,
              })),
            )
            // A concurrent writer may have stored the same content a moment ago; it is then found below.
            .onConflictDoNothing()
            .returning(memoryColumns)
        : Promise.resolve([] as MemoryRow[]),
  );
  for (const r of rows) {
    byKey.set(key({ hash: r.contentHash, collection: r.collectionId }), r);
    insertedKeys.add(key({ hash: r.contentHash, collection: r.collectionId }));
  }

  const out: MemoryRow[] = [];
  const createdFlags: boolean[] = [];
  const seen = new Set<string>();
  for (const p of prepared) {
    const k = key(p);
    let row = byKey.get(k) ?? (await findActiveDuplicate(ctx, s, agent, p.collection, p.hash));
    if (!row) throw errors.internal();
    const isNew = insertedKeys.has(k) && !seen.has(k);
    seen.add(k);
    if (!isNew) row = await foldDuplicate(ctx, row, storedConfidence(p.confidence));
    byKey.set(k, row);
    out.push(row);
    createdFlags.push(isNew);
  }
  if (insertedKeys.size) termStatsChanged(ctx.deps, s);
  for (const c of collectionIds) await maybeAutoCompact(ctx, s, c);
  return { created: insertedKeys.size, memories: out.map(memoryView), createdFlags };
}

export async function storeMemory(ctx: MemoryContext, s: Scope, input: StoreMemoryInput) {
  const { agentId, ...item } = input;
  const r = await storeMemories(ctx, s, agentId, [item]);
  return { memory: r.memories[0]!, created: r.createdFlags[0]! };
}

export async function getMemory(ctx: MemoryContext, s: Scope, id: string) {
  return memoryView(await requireMemory(ctx, s, id));
}

export async function listMemories(ctx: MemoryContext, s: Scope, q: ListMemoriesInput) {
  const conds: (SQL | undefined)[] = [inScope(s)];
  if (q.agentId) conds.push(isUuid(q.agentId) ? eq(memories.agentId, q.agentId) : sql`false`);
  if (q.collectionId)
    conds.push(isUuid(q.collectionId) ? eq(memories.collectionId, q.collectionId) : sql`false`);
  if (q.type) conds.push(eq(memories.type, q.type));
  if (q.tier) conds.push(eq(memories.tier, q.tier));
  const where = and(...conds);
  const db = ctx.deps.db.orm;
  const rows = await db
    .select(memoryColumns)
    .from(memories)
    .where(where)
    .orderBy(desc(memories.createdAt), desc(memories.id))
    .limit(q.limit)
    .offset(q.offset);
  const [{ n }] = (await db.select({ n: count() }).from(memories).where(where)) as [{ n: number }];
  return offsetPage(rows.map(memoryView), Number(n), q);
}

export async function updateMemory(ctx: MemoryContext, s: Scope, id: string, input: UpdateMemoryInput) {
  const before = await requireMemory(ctx, s, id);
  if (input.agentId) await requireAgent(ctx, s, input.agentId);
  if (input.collectionId) await requireCollection(ctx, s, input.collectionId);
  const now = ctx.deps.clock.now();
  const content = input.content;
  const contentChanged = content !== undefined && content !== before.content;
  const set: Partial<typeof memories.$inferInsert> = { updatedAt: now };
  if (contentChanged) {
    set.content = content;
    set.contentHash = contentHash(content);
  }
  if (input.type !== undefined) set.type = input.type;
  if (input.tier !== undefined) set.tier = input.tier;
  if (input.confidence !== undefined) set.confidence = storedConfidence(input.confidence);
  if (input.metadata !== undefined) set.metadata = input.metadata;
  if (input.tags !== undefined) set.tags = cleanTags(input.tags);
  if (input.agentId !== undefined) set.agentId = input.agentId;
  if (input.collectionId !== undefined) set.collectionId = input.collectionId;
  // A PATCH that changes nothing writes nothing (no history entry, no new updatedAt).
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const changed =
    contentChanged ||
    (set.type !== undefined && set.type !== before.type) ||
    (set.tier !== undefined && set.tier !== before.tier) ||
    (set.confidence !== undefined && Math.abs(set.confidence - before.confidence) > 1e-6) ||
    (set.metadata !== undefined && !same(set.metadata, before.metadata)) ||
    (set.tags !== undefined && !same(set.tags, before.tags)) ||
    (set.agentId !== undefined && set.agentId !== before.agentId) ||
    (set.collectionId !== undefined && set.collectionId !== before.collectionId);
  if (!changed) return memoryView(before);
  try {
    await writeEmbedded(ctx, s, contentChanged ? [content] : [], async (tx, e) => {
      if (e) Object.assign(set, vectorColumns(e, 0));
      await tx.insert(memoryHistory).values({
        memoryId: id,
        orgId: s.orgId,
        environment: s.environment,
        content: before.content,
        type: before.type,
        tier: before.tier,
        confidence: before.confidence,
        tags: before.tags,
        metadata: before.metadata,
        event: input.tier === 'archived' && before.tier !== 'archived' ? 'archived' : 'updated',
        validFrom: before.updatedAt,
        validTo: now,
      });
      await tx
        .update(memories)
        .set(set)
        .where(and(inScope(s), eq(memories.id, id)));
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw memoryErrors.memoryDuplicate();
    throw err;
  }
  if (contentChanged) termStatsChanged(ctx.deps, s);
  return memoryView(await requireMemory(ctx, s, id));
}

export async function deleteMemory(ctx: MemoryContext, s: Scope, id: string) {
  await requireMemory(ctx, s, id);
  await ctx.deps.db.orm.delete(memories).where(and(inScope(s), eq(memories.id, id)));
  termStatsChanged(ctx.deps, s);
  return { success: true };
}

/** Deletes the caller's memories among the ids; ids of others (or unknown ones) are not counted. */
export async function deleteManyMemories(ctx: MemoryContext, s: Scope, ids: string[]) {
  const valid = [...new Set(ids.filter(isUuid))];
  if (valid.length === 0) return { deletedCount: 0 };
  const rows = await ctx.deps.db.orm
    .delete(memories)
    .where(and(inScope(s), inArray(memories.id, valid)))
    .returning({ id: memories.id });
  if (rows.length) termStatsChanged(ctx.deps, s);
  return { deletedCount: rows.length };
}

/** The memory now, and each earlier version (oldest first) with the time it was valid. */
export async function memoryHistoryOf(ctx: MemoryContext, s: Scope, id: string) {
  const current = await requireMemory(ctx, s, id);
  const rows = await ctx.deps.db.orm
    .select()
    .from(memoryHistory)
    .where(
      and(
        eq(memoryHistory.memoryId, id),
        eq(memoryHistory.orgId, s.orgId),
        eq(memoryHistory.environment, s.environment),
      ),
    )
    .orderBy(asc(memoryHistory.validTo), asc(memoryHistory.validFrom), asc(memoryHistory.seq));
  return {
    memoryId: id,
    current: memoryView(current),
    items: rows.map((r) => ({
      content: r.content,
      type: r.type,
      tier: r.tier,
      confidence: Math.round(r.confidence * 1e6) / 1e6,
      tags: r.tags,
      metadata: r.metadata,
      event: r.event,
      validFrom: r.validFrom.toISOString(),
      validTo: r.validTo.toISOString(),
      decision: r.decision,
      reason: r.reason,
      relatedMemoryId: r.relatedMemoryId,
      model: r.model,
    })),
    total: rows.length,
  };
}
