import crypto from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { perObject } from '../../core/per-object.ts';
import type { Deps } from '../../deps.ts';

// One partial HNSW index per embedder and vector slot (docs/decisions/025-per-org-embedders.md). The
// columns are dimensionless `vector`s; pgvector indexes only fixed sizes, so each index is on the column
// cast to the embedder's size — vector(N) up to 2,000 dimensions, halfvec(N) up to 4,000 — restricted to
// the rows of that embedder. A recall query names the same embedder and the same cast, so the planner can
// use it. Larger vectors have no index (recall scans them exactly).
//
// Two slots per memory: the organization's embedder generation (platform/embedders.ts) picks the active
// one by parity; a re-embedding writes the other, and the switch flips the generation.

export type Slot = { vec: 'embedding' | 'embedding_alt'; model: 'embedding_model' | 'embedding_alt_model' };
const MAIN: Slot = { vec: 'embedding', model: 'embedding_model' };
const ALT: Slot = { vec: 'embedding_alt', model: 'embedding_alt_model' };

export function slotOf(generation: number): Slot {
  return generation % 2 === 1 ? ALT : MAIN;
}

export const HNSW_WITH = 'm=16, ef_construction=64';

export type VectorKind = { cast: 'vector' | 'halfvec' | null; dimension: number };

export function vectorKind(dimension: number): VectorKind {
  if (dimension <= 2000) return { cast: 'vector', dimension };
  if (dimension <= 4000) return { cast: 'halfvec', dimension };
  return { cast: null, dimension };
}

/** A SQL string literal; embedder ids come from config, but quote them properly anyway. */
export function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

export function indexName(embedder: string, dimension: number, generation = 0): string {
  const h = crypto.createHash('sha256').update(embedder).digest('hex').slice(0, 12);
  return `memories_hnsw_${h}_${dimension}${slotOf(generation) === ALT ? '_alt' : ''}`;
}

/**
 * The pieces a query needs for one embedder's vectors: the row filter (the index predicate, as a literal
 * so the planner can match it) and the cosine distance to `vec` under the index's cast.
 */
export function embedderSql(embedder: string, dimension: number, vec: string, generation = 0) {
  const k = vectorKind(dimension);
  const s = slotOf(generation);
  const filter = sql.raw(`m.${s.model} = ${literal(embedder)} AND m.${s.vec} IS NOT NULL`);
  const type = sql.raw(k.cast ? `${k.cast}(${k.dimension})` : 'vector');
  const distance: SQL = sql`(m.${sql.raw(s.vec)}${k.cast ? sql`::${type}` : sql``} <=> ${vec}::${type})`;
  return { filter, distance, slot: s };
}

const knownOf = perObject<Deps, Set<string>>(() => new Set());

/**
 * Creates the embedder's index if it does not exist yet (first use by any organization). Cheap after the
 * first call per process: the name is remembered, and on a fresh embedder the index starts empty.
 */
export async function ensureVectorIndex(
  deps: Deps,
  embedder: string,
  dimension: number,
  generation: number,
): Promise<void> {
  const k = vectorKind(dimension);
  if (!k.cast) return;
  const name = indexName(embedder, dimension, generation);
  const s = slotOf(generation);
  const seen = knownOf(deps);
  if (seen.has(name)) return;
  const exists = await deps.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_class WHERE relname = $1 AND relkind = 'i'`,
    [name],
  );
  if (!exists.rows[0]!.n) {
    const type = `${k.cast}(${k.dimension})`;
    // IF NOT EXISTS: another process may create it at the same moment (which can still collide on the
    // catalog's unique name; the index then exists all the same).
    await deps.db
      .query(
        `CREATE INDEX IF NOT EXISTS "${name}" ON memories USING hnsw ((${s.vec}::${type}) ${k.cast}_cosine_ops)
           WITH (${HNSW_WITH}) WHERE ${s.model} = ${literal(embedder)}`,
      )
      .catch((err: { code?: string }) => {
        if (err.code !== '23505' && err.code !== '42P07') throw err;
      });
    deps.log.info({ index: name, embedder, dimension }, 'memory vector index created');
  }
  seen.add(name);
}
