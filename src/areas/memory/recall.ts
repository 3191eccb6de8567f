import { type SQL, sql } from 'drizzle-orm';
import { requireAgent } from './agents.ts';
import { requireCollection } from './collections.ts';
import type { MemoryContext, Scope } from './context.ts';
import { toVectorLiteral } from './embedding.ts';
import { MEMORY_SQL_COLUMNS, type MemoryRow, memoryView } from './memory-view.ts';
import { embedForRecall } from './org-embedder.ts';
import type { RecallInput, SearchInput } from './schema.ts';
import type { MemoryTier } from './tables.ts';
import { embedderSql } from './vector-indexes.ts';

// Recall (vector similarity, optionally fused with keyword rank) and keyword search. Every filter sits in
// the WHERE clause of the same query that ranks, so a filter never empties a top-k picked beforehand.

export const RECALL_TUNING = {
  /** hnsw.ef_search: candidates the HNSW walk keeps; measured for recall@10 ≥ 0.95 (docs/benchmarks.md). */
  efSearch: 100,
  /** At or below this many matching rows the exact scan is both exact and fast, so no index is used. */
  exactScanMax: 2000,
  /** Reciprocal rank fusion constant (the usual 60). */
  rrfK: 60,
};

export const DEFAULT_TIERS: MemoryTier[] = ['hot', 'warm'];

type Filters = {
  agentId?: string;
  collectionId?: string;
  type?: string;
  tiers: MemoryTier[];
  metadata?: Record<string, unknown>;
  tags?: string[];
};

/** A text[] literal from parameters (drizzle would otherwise expand an array into a row). */
function textArray(list: string[]): SQL {
  return sql`ARRAY[${sql.join(
    list.map((v) => sql`${v}`),
    sql`, `,
  )}]::text[]`;
}

function whereOf(s: Scope, f: Filters): SQL {
  const parts: SQL[] = [
    sql`m.org_id = ${s.orgId}`,
    sql`m.environment = ${s.environment}`,
    sql`m.tier = ANY(${textArray(f.tiers)})`,
  ];
  if (f.agentId) parts.push(sql`m.agent_id = ${f.agentId}`);
  if (f.collectionId) parts.push(sql`m.collection_id = ${f.collectionId}`);
  if (f.type) parts.push(sql`m.type = ${f.type}`);
  if (f.metadata && Object.keys(f.metadata).length)
    parts.push(sql`m.metadata @> ${JSON.stringify(f.metadata)}::jsonb`);
  if (f.tags?.length) parts.push(sql`m.tags @> ${textArray(f.tags)}`);
  return sql.join(parts, sql` AND `);
}

type Ranked = MemoryRow & { similarity: number };

/** The ranking query; `exact` hides the distance from the index ("+ 0"), forcing the exact scan. */
export function vectorTopKSql(where: SQL, dist: SQL, k: number, exact: boolean): SQL {
  const order = exact ? sql`${dist} + 0` : dist;
  return sql`
    SELECT ${sql.raw(MEMORY_SQL_COLUMNS)}, 1 - ${dist} AS similarity
      FROM memories m WHERE ${where} ORDER BY ${order} LIMIT ${k}`;
}
type Exec = (q: SQL) => Promise<{ rows: unknown[] }>;

/**
 * Top-k by cosine similarity among the filtered rows: exact scan for small sets, the embedder's HNSW
 * index otherwise. `where` includes the embedder filter and `dist` its cast (vector-indexes.ts).
 */
async function vectorTopK(exec: Exec, where: SQL, dist: SQL, k: number): Promise<Ranked[]> {
  const probe = await exec(
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM memories m WHERE ${where} LIMIT ${RECALL_TUNING.exactScanMax + 1}) x`,
  );
  const small = (probe.rows[0] as { n: number }).n <= RECALL_TUNING.exactScanMax;
  if (!small) {
    // Transaction-local settings in one round trip:
    // - ef_search: candidates the HNSW walk keeps (recall against speed);
    // - iterative_scan (pgvector 0.8): keep walking the graph until k rows pass the filters
    //   (relaxed order, re-sorted below), so a filter never starves the top-k;
    // - enable_sort off: the probe showed a large set, where the HNSW walk is right; stale statistics
    //   (PGlite has no autovacuum) must not talk the planner into scanning and sorting every row.
    const ef = String(Math.max(RECALL_TUNING.efSearch, k));
    await exec(sql`SELECT set_config('hnsw.ef_search', ${ef}, true),
                          set_config('hnsw.iterative_scan', 'relaxed_order', true),
                          set_config('enable_sort', 'off', true)`);
  }
  const r = await exec(vectorTopKSql(where, dist, k, small));
  const rows = r.rows as Ranked[];
  for (const row of rows) row.similarity = Number(row.similarity);
  return rows.sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : 1));
}

/**
 * Keyword matching on the stored tsvector. `all`: every word must appear (websearch syntax: quotes, OR,
 * -word) — the search endpoint. `any`: any word may appear — hybrid recall's keyword leg. Both also match
 * a tag equal to the query or to one of its words, which adds 1 to the rank.
 */
function keywordMatch(q: string, mode: 'all' | 'any'): { match: SQL; rank: SQL } {
  const terms = keywordTerms(q);
  const tsq =
    mode === 'all'
      ? sql`websearch_to_tsquery('english', ${q})`
      : sql`replace(plainto_tsquery('english', ${q})::text, ' & ', ' | ')::tsquery`;
  const tagHit = sql`m.tags && ${textArray(terms)}`;
  return {
    match: sql`(m.search_tsv @@ (${tsq}) OR ${tagHit})`,
    rank: sql`(ts_rank_cd(m.search_tsv, ${tsq}) + CASE WHEN ${tagHit} THEN 1 ELSE 0 END)`,
  };
}

/** Hybrid recall ranks at most this many keyword matches (common words can match most of a store). */
const KEYWORD_CANDIDATES = 1000;

export function keywordTerms(q: string): string[] {
  const words = q.split(/\s+/).filter(Boolean);
  return [...new Set([q.trim(), ...words, ...words.map((w) => w.toLowerCase()), q.trim().toLowerCase()])];
}

export type RecallOptions = {
  /** false: a look, not a use (the dashboard's recall panel): accessCount and lastAccessedAt stay as they are. */
  countAccess?: boolean;
};

export async function recall(ctx: MemoryContext, s: Scope, input: RecallInput, opts: RecallOptions = {}) {
  if (input.agentId) await requireAgent(ctx, s, input.agentId);
  if (input.collectionId) await requireCollection(ctx, s, input.collectionId);
  const tiers = input.tiers ?? (input.tier ? [input.tier] : DEFAULT_TIERS);
  // Only the vectors of the organization's active embedder are comparable with the query (pending
  // memories have none yet and are not recalled).
  const q = await embedForRecall(ctx, s.orgId, input.query);
  const e = embedderSql(q.model, q.dimension, toVectorLiteral(q.vector), q.generation);
  const where = sql`${whereOf(s, { ...input, tiers: [...new Set(tiers)] })} AND ${e.filter}`;
  const pool = input.mode === 'hybrid' ? Math.max(input.limit * 3, 30) : input.limit;

  const ranked = await ctx.deps.db.orm.transaction(async (tx) => {
    const exec: Exec = (q) => tx.execute(q) as unknown as Promise<{ rows: unknown[] }>;
    const byVector = await vectorTopK(exec, where, e.distance, pool);
    if (input.mode !== 'hybrid') return byVector;
    const kw = keywordMatch(input.query, 'any');
    await exec(sql`SELECT set_config('enable_sort', 'on', true)`);
    const r = await exec(sql`
      SELECT ${sql.raw(MEMORY_SQL_COLUMNS)}, 1 - ${e.distance} AS similarity
        FROM (SELECT * FROM memories m WHERE ${where} AND ${kw.match} LIMIT ${KEYWORD_CANDIDATES}) m
       ORDER BY ${kw.rank} DESC, m.created_at DESC LIMIT ${pool}`);
    const byKeyword = r.rows as Ranked[];
    return fuse(byVector, byKeyword);
  });

  const threshold = input.threshold ?? 0;
  const out = ranked.filter((m) => m.similarity >= threshold).slice(0, input.limit);
  if (opts.countAccess !== false)
    ctx.access.record(
      out.map((m) => m.id),
      ctx.deps.clock.now(),
    );
  return {
    memories: out.map((m) => ({ ...memoryView(m), similarity: Math.round(m.similarity * 1e6) / 1e6 })),
    total: out.length,
  };
}

/** Reciprocal rank fusion: score = Σ 1 / (k + rank) over the vector and the keyword list. */
export function fuse(a: Ranked[], b: Ranked[]): Ranked[] {
  const k = RECALL_TUNING.rrfK;
  const scored = new Map<string, { row: Ranked; score: number }>();
  for (const list of [a, b]) {
    list.forEach((row, i) => {
      const e = scored.get(row.id) ?? { row: { ...row, similarity: Number(row.similarity) }, score: 0 };
      e.score += 1 / (k + i + 1);
      scored.set(row.id, e);
    });
  }
  return [...scored.values()]
    .sort((x, y) => y.score - x.score || y.row.similarity - x.row.similarity)
    .map((e) => e.row);
}

export async function searchMemories(ctx: MemoryContext, s: Scope, q: SearchInput) {
  if (q.agentId) await requireAgent(ctx, s, q.agentId);
  if (q.collectionId) await requireCollection(ctx, s, q.collectionId);
  const where = whereOf(s, { ...q, tiers: q.tier ? [q.tier] : DEFAULT_TIERS });
  const kw = keywordMatch(q.q, 'all');
  const r = await ctx.deps.db.orm.execute(sql`
    SELECT ${sql.raw(MEMORY_SQL_COLUMNS)}, ${kw.rank} AS rank
      FROM memories m WHERE ${where} AND ${kw.match}
     ORDER BY rank DESC, m.created_at DESC, m.id LIMIT ${q.limit}`);
  const rows = (r as unknown as { rows: (MemoryRow & { rank: number })[] }).rows;
  return {
    memories: rows.map((m) => ({ ...memoryView(m), rank: Math.round(Number(m.rank) * 1e6) / 1e6 })),
    total: rows.length,
  };
}
