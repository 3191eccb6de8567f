import { and, asc, eq, or, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { claimEmbedder } from '../../platform/embedders.ts';
import { type DbLike, registerVectorStore } from '../../platform/reembed.ts';
import { memoryContext } from './context.ts';
import { toVectorLiteral } from './embedding.ts';
import { embedForWrite } from './org-embedder.ts';
import { memories } from './tables.ts';
import { ensureVectorIndex } from './vector-indexes.ts';

// Memory's vectors as the models area's re-embedding job sees them, and the job that embeds memories
// stored `pending` (their provider was down).

const staleOf = (orgId: string, model: string) =>
  and(
    eq(memories.orgId, orgId),
    or(sql`${memories.embeddingModel} <> ${model}`, eq(memories.embeddingStatus, 'pending')),
  );

type Vec = { id: string; text: string; vector: number[] };

/**
 * Writes vectors made by `model` to the given memories, marking them ready — unless a memory's content
 * changed since it was read (its new content has been, or is being, embedded by its own write).
 */
async function updateVectors(db: DbLike, rows: Vec[], model: string): Promise<void> {
  if (rows.length === 0) return;
  const values = sql.join(
    rows.map((r) => sql`(${r.id}::uuid, ${r.text}::text, ${toVectorLiteral(r.vector)}::vector)`),
    sql`, `,
  );
  await db.execute(sql`
    UPDATE memories m SET embedding = v.e, embedding_model = ${model}, embedding_status = 'ready'
      FROM (VALUES ${values}) AS v(id, content, e)
     WHERE m.id = v.id AND m.content = v.content`);
}

registerVectorStore({
  name: 'memories',
  countStale: async (deps, db, orgId, model) => {
    if (!deps.db.features.has('vector')) return 0;
    const r = await db.select({ n: sql<number>`count(*)::int` }).from(memories).where(staleOf(orgId, model));
    return Number(r[0]?.n ?? 0);
  },
  stale: async (deps, orgId, model, limit) => {
    if (!deps.db.features.has('vector')) return [];
    return deps.db.orm
      .select({ id: memories.id, text: memories.content })
      .from(memories)
      .where(staleOf(orgId, model))
      .orderBy(asc(memories.createdAt), asc(memories.id))
      .limit(limit);
  },
  write: async (deps, _orgId, rows, model) => {
    if (!deps.db.features.has('vector')) return;
    if (rows.length) await ensureVectorIndex(deps, model, rows[0]!.vector.length);
    await updateVectors(deps.db.orm, rows, model);
  },
});

/**
 * The job `memory.embed`: embeds the organization's pending memories with its active embedder. Throws
 * while the provider is still unavailable, so the queue retries later (with backoff).
 */
export async function embedPendingMemories(deps: Deps, orgId: string, batch = 100): Promise<number> {
  if (!deps.db.features.has('vector')) return 0;
  const ctx = memoryContext(deps);
  let done = 0;
  for (;;) {
    const rows = await deps.db.orm
      .select({ id: memories.id, text: memories.content })
      .from(memories)
      .where(and(eq(memories.orgId, orgId), eq(memories.embeddingStatus, 'pending')))
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
      if (!(await claimEmbedder(tx, orgId, e.model, e.dimension, deps.clock.now()))) return;
      await updateVectors(
        tx,
        rows.map((r, i) => ({ ...r, vector: vectors[i]! })),
        e.model,
      );
      done += rows.length;
    });
  }
}
