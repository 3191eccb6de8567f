import { and, asc, eq, type SQL, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import type { DbLike, ReembedTarget, VectorStore } from '../models/index.ts';
import { activeEmbedder, claimEmbedder } from '../models/index.ts';
import { memoryContext } from './context.ts';
import { toVectorLiteral } from './embedding.ts';
import { embedForWrite } from './org-embedder.ts';
import { memories } from './tables.ts';
import { ensureVectorIndex, literal, slotOf } from './vector-indexes.ts';

// Memory's vectors as the models area's re-embedding job sees them (two slots per memory, see
// vector-indexes.ts), and the job that embeds memories stored `pending` (their provider was down).

/** The organization's rows that lack a vector from the target in the target's slot. */
function staleOf(orgId: string, t: ReembedTarget): SQL {
  const s = slotOf(t.generation);
  return sql`${memories.orgId} = ${orgId} AND (${sql.raw(s.vec)} IS NULL OR ${sql.raw(s.model)} IS DISTINCT FROM ${sql.raw(literal(t.model))})`;
}

type Vec = { id: string; text: string; vector: number[] };

/**
 * Writes vectors made by `model` into the slot of `generation` — unless a memory's content changed since
 * it was read (its new content has been, or is being, embedded by its own write).
 */
async function updateVectors(db: DbLike, rows: Vec[], model: string, generation: number): Promise<void> {
  if (rows.length === 0) return;
  const s = slotOf(generation);
  const values = sql.join(
    rows.map((r) => sql`(${r.id}::uuid, ${r.text}::text, ${toVectorLiteral(r.vector)}::vector)`),
    sql`, `,
  );
  await db.execute(sql`
    UPDATE memories m SET ${sql.raw(s.vec)} = v.e, ${sql.raw(s.model)} = ${model}
      FROM (VALUES ${values}) AS v(id, content, e)
     WHERE m.id = v.id AND m.content = v.content`);
}

/** Memory's vectors, which the models area re-embeds when an organization's embedder changes. */
export const memoryVectorStore: VectorStore = {
  name: 'memories',
  countStale: async (deps, db, orgId, target) => {
    if (!deps.db.features.has('vector')) return 0;
    const r = await db.select({ n: sql<number>`count(*)::int` }).from(memories).where(staleOf(orgId, target));
    return Number(r[0]?.n ?? 0);
  },
  stale: async (deps, orgId, target, limit) => {
    if (!deps.db.features.has('vector')) return [];
    return deps.db.orm
      .select({ id: memories.id, text: memories.content })
      .from(memories)
      .where(staleOf(orgId, target))
      .orderBy(asc(memories.createdAt), asc(memories.id))
      .limit(limit);
  },
  write: async (deps, _orgId, rows, target, dimension) => {
    if (!deps.db.features.has('vector') || rows.length === 0) return;
    await ensureVectorIndex(deps, target.model, dimension, target.generation);
    await updateVectors(deps.db.orm, rows, target.model, target.generation);
  },
  clearInactive: async (deps, orgId, generation, limit) => {
    if (!deps.db.features.has('vector')) return 0;
    const old = slotOf(generation + 1);
    const r = await deps.db.query<{ id: string }>(
      `UPDATE memories SET ${old.vec} = NULL, ${old.model} = NULL WHERE id IN (
         SELECT id FROM memories WHERE org_id = $1 AND (${old.vec} IS NOT NULL OR ${old.model} IS NOT NULL)
          LIMIT ${Number(limit)}) RETURNING id`,
      [orgId],
    );
    return r.rows.length;
  },
};

/**
 * The job `memory.embed`: embeds the organization's pending memories (no vector in the active slot) with
 * its active embedder. Throws while the provider is still unavailable, so the queue retries later.
 */
export async function embedPendingMemories(deps: Deps, orgId: string, batch = 100): Promise<number> {
  if (!deps.db.features.has('vector')) return 0;
  const ctx = memoryContext(deps);
  let done = 0;
  for (;;) {
    const { generation } = await activeEmbedder(deps, orgId);
    const rows = await deps.db.orm
      .select({ id: memories.id, text: memories.content })
      .from(memories)
      .where(and(eq(memories.orgId, orgId), sql`${sql.raw(slotOf(generation).vec)} IS NULL`))
      .orderBy(asc(memories.createdAt), asc(memories.id))
      .limit(batch);
    if (rows.length === 0) return done;
    const e = await embedForWrite(
      ctx,
      orgId,
      rows.map((r) => r.text),
    );
    if (!e.vectors) throw new Error(`The embedding provider of '${e.model}' is still unavailable.`);
    const vectors = e.vectors;
    await deps.db.orm.transaction(async (tx) => {
      // The active embedder changed since embedding: the next round embeds again with the new one.
      if (!(await claimEmbedder(tx, orgId, e, deps.clock.now()))) return;
      await updateVectors(
        tx,
        rows.map((r, i) => ({ ...r, vector: vectors[i]! })),
        e.model,
        e.generation,
      );
      done += rows.length;
    });
  }
}
