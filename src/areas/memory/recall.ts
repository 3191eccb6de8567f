import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { parseLocalEmbedderId } from '../../core/ai/local-embedder.ts';
import { queryPreparedBatch } from '../../core/db/pglite-prepared.ts';
import { errors } from '../../core/errors.ts';
import { requireAgent } from './agents.ts';
import { requireCollection } from './collections.ts';
import { isUuid, type MemoryContext, type Scope } from './context.ts';
import { toVectorLiteral } from './embedding.ts';
import { type Bm25Plan, bm25IdsSql, bm25TopSql, parseKeywordQuery, planBm25 } from './keyword-rank.ts';
import { embeddedMemoryColumns, MEMORY_SQL_COLUMNS, type MemoryRow, memoryView } from './memory-view.ts';
import { embedForRecall } from './org-embedder.ts';
import { weightedQueryVector } from './query-weights.ts';
import type { RecallInput, SearchInput } from './schema.ts';
import type { MemoryTier } from './tables.ts';
import { termStats } from './term-stats.ts';
import { embedderSql } from './vector-indexes.ts';

// Recall and keyword search. Recall has two legs: the vector leg (cosine similarity to the query's
// embedding) and the keyword leg (BM25, keyword-rank.ts); `hybrid`, the default, fuses them. Every
// filter sits in the WHERE clause of the same query that ranks, so a filter never empties a top-k
// picked beforehand.

export const RECALL_TUNING = {
  /** hnsw.ef_search: candidates the HNSW walk keeps; measured for recall@10 ≥ 0.95 (docs/benchmarks.md). */
  efSearch: 100,
  /**
   * ef_search for a store of at most `smallStoreMax` memories: ANN fidelity 1.000 at 64 (0.998 at 40) over
   * 6,000 memories, and each recall's walk shorter (decision 085); above, efSearch (0.97 at 100,000).
   */
  smallStoreEfSearch: 64,
  smallStoreMax: 10_000,
  /** At or below this many matching rows the exact scan is both exact and fast, so no index is used. */
  exactScanMax: 2000,
  /**
   * Reciprocal rank fusion constant: 10 rather than the usual 60, so the first ranks of each leg count
   * (measured on bench/memory-quality: better at every leg weight tried, docs/benchmarks.md).
   */
  rrfK: 10,
  /**
   * Weights of the vector and the keyword leg. The built-in embedder's leg is a noisier copy of the
   * lexical evidence BM25 already has, so it counts half (measured); a real model's leg, which knows
   * meaning, counts as much as BM25 (not measurable here: no model on this machine).
   */
  legWeights: [1, 1] as [number, number],
  localLegWeights: [0.5, 1] as [number, number],
  /**
   * How the legs are fused: a weighted sum of min-max normalised scores (measured better than RRF on both
   * the chats and the notes of bench/memory-quality, docs/memory.md), or reciprocal rank fusion.
   */
  fusion: 'relative' as 'rrf' | 'relative',
  /** PGlite: the legs' statement as a named prepared statement (decision 086); false for A/B benches. */
  preparedLegs: true,
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

/** A candidate of a leg: the memory's id and its similarity (the memory's columns come last, for the page only). */
type Ranked = { id: string; similarity: number };
/** A leg's row with its own score (higher is better: BM25, or minus the distance). */
type Scored = Ranked & { score: number };

/** The ranking query; `exact` hides the distance from the index ("+ 0"), forcing the exact scan. */
export function vectorTopKSql(where: SQL, dist: SQL, k: number, exact: boolean, similarity?: SQL): SQL {
  const order = exact ? sql`${dist} + 0` : dist;
  return sql`
    SELECT ${sql.raw(MEMORY_SQL_COLUMNS)}, ${similarity ?? sql`1 - ${dist}`} AS similarity, ${dist} AS d
      FROM memories m WHERE ${where} ORDER BY ${order} LIMIT ${k}`;
}
type Exec = (q: SQL) => Promise<{ rows: unknown[] }>;
/**
 * `legs`: the legs' statement, whose text repeats (every value a parameter): prepared on PGlite, with the
 * HNSW settings in the same protocol call once `hnsw()` asked for them; `page`: the returned page's
 * columns, prepared on PGlite too.
 */
type Plan = { legs: Exec; page: Exec; small: boolean };

const dialect = new PgDialect();

/** The HNSW walk's settings, local to the transaction (see `inRecallTx`). */
function hnswSettingsSql(ef: string): SQL {
  return sql`SELECT set_config('hnsw.ef_search', ${ef}, true),
                    set_config('hnsw.iterative_scan', 'relaxed_order', true),
                    set_config('enable_sort', 'off', true),
                    set_config('jit', 'off', true),
                    set_config('plan_cache_mode', 'force_generic_plan', true)`;
}

/**
 * Runs a recall's queries: directly when the filtered rows are few (the exact scan needs no settings),
 * else with local settings that steer the HNSW walk (applied by `hnsw()`):
 * - ef_search: candidates the HNSW walk keeps (recall against speed);
 * - iterative_scan (pgvector 0.8): keep walking the graph until k rows pass the filters (relaxed order,
 *   re-sorted after), so a filter never starves the top-k;
 * - enable_sort off: the probe showed a large set, where the HNSW walk is right; stale statistics (PGlite
 *   has no autovacuum) must not talk the planner into scanning and sorting every row.
 * - jit off: the keyword leg, in the same statement, must sort, so its cost carries enable_sort's penalty
 *   (1e10), far above jit_above_cost: PostgreSQL would JIT-compile the statement (0.5 s) every recall.
 * - plan_cache_mode force_generic_plan: a prepared legs' statement (PGlite) is planned once, not per call
 *   (planning was ≈ 0.7 ms of a recall); with enable_sort off its generic plan is the same HNSW walk and
 *   GIN scan as a custom one (EXPLAIN (GENERIC_PLAN), decision 090). No effect on PostgreSQL's unnamed
 *   statements.
 * On PostgreSQL the settings need a transaction (BEGIN, set_config, the legs, the page, COMMIT). On
 * PGlite the settings and the legs' statement go in one protocol call as named prepared statements, so
 * they share the implicit transaction that its Sync ends: no BEGIN/COMMIT, and the page's statement
 * after it runs with the defaults (decisions 086, 090). Prepared statements are parsed once per PGlite
 * instance and planned by PostgreSQL's plan cache (core/db/pglite-prepared.ts).
 * The organization's size comes from its term statistics, so a store of at most `exactScanMax` memories
 * needs no probe; a larger one counts the filtered rows (up to that limit) first when a filter narrows
 * them (`narrowed`).
 */
async function inRecallTx<T>(
  deps: MemoryContext['deps'],
  where: SQL,
  orgSize: number,
  narrowed: boolean,
  k: number,
  run: (p: Plan, hnsw: () => Promise<void>) => Promise<T>,
  knownSize?: number,
): Promise<T> {
  const direct: Exec = (q) => deps.db.orm.execute(q) as unknown as Promise<{ rows: unknown[] }>;
  let small = orgSize <= RECALL_TUNING.exactScanMax;
  // Without a narrowing filter the rows are the organization's (term statistics count them): no probe,
  // one round trip fewer per recall. Were most of them cold, the iterative scan still fills the page.
  // Narrowed by the agent alone, the statistics' count of the agent's memories decides (decision 085).
  if (!small && narrowed && knownSize !== undefined) small = knownSize <= RECALL_TUNING.exactScanMax;
  else if (!small && narrowed) {
    const probe = await direct(
      sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM memories m WHERE ${where} LIMIT ${RECALL_TUNING.exactScanMax + 1}) x`,
    );
    small = (probe.rows[0] as { n: number }).n <= RECALL_TUNING.exactScanMax;
  }
  const base =
    orgSize <= RECALL_TUNING.smallStoreMax ? RECALL_TUNING.smallStoreEfSearch : RECALL_TUNING.efSearch;
  const settings = hnswSettingsSql(String(Math.max(base, k)));
  const pg = deps.db.pglite;
  if (pg && RECALL_TUNING.preparedLegs) {
    let withSettings = false;
    const prepared =
      (first: () => SQL | null): Exec =>
      async (q) => {
        const pre = first();
        const statements = [...(pre ? [pre] : []), q].map((x) => {
          const { sql: text, params } = dialect.sqlToQuery(x);
          return { text, params };
        });
        return { rows: await queryPreparedBatch(pg, statements, false) };
      };
    const legs = prepared(() => (withSettings ? settings : null));
    return run({ legs, page: prepared(() => null), small }, async () => {
      withSettings = !small;
    });
  }
  if (small) return run({ legs: direct, page: direct, small }, async () => {});
  return deps.db.orm.transaction(async (tx) => {
    const exec: Exec = (q) => tx.execute(q) as unknown as Promise<{ rows: unknown[] }>;
    return run({ legs: exec, page: exec, small }, async () => {
      await exec(settings);
    });
  });
}

/**
 * Both legs in one statement (one round trip): each leg's top `k` as ids and scores only, and each
 * candidate's similarity — the memory's columns are read after fusion, for the returned page only.
 * Rows: leg `k` (keyword: BM25 score and rank `rk`) or `v` (vector: distance), and with `agent` a row
 * `a` when that agent exists in the scope (the agent check, without a statement of its own).
 */
function legsSql(
  where: SQL,
  k: number,
  similarity: SQL,
  vector: { dist: SQL; exact: boolean } | null,
  plan: Bm25Plan | null,
  agent?: { scope: Scope; id: string },
): SQL {
  const ctes: SQL[] = [];
  const parts: SQL[] = [];
  if (plan) {
    ctes.push(sql`kw AS MATERIALIZED (${bm25IdsSql(where, plan, k)})`);
    // BM25's own order (score, newest first, id) as a rank: timestamps lose their microseconds in JS.
    parts.push(
      sql`SELECT 'k' AS leg, id, kscore AS score, row_number() OVER (ORDER BY kscore DESC, created_at DESC, id) AS rk FROM kw`,
    );
  }
  if (vector) {
    const order = vector.exact ? sql`${vector.dist} + 0` : vector.dist;
    ctes.push(
      sql`v AS MATERIALIZED (SELECT m.id, ${vector.dist} AS d FROM memories m WHERE ${where} ORDER BY ${order} LIMIT ${k})`,
    );
    parts.push(sql`SELECT 'v' AS leg, id, d AS score, 0::bigint AS rk FROM v`);
  }
  const agentRow = agent
    ? sql` UNION ALL SELECT 'a', a.id, 0::float8, 0::bigint, 0::float8 FROM memory_agents a
            WHERE a.id = ${agent.id} AND a.org_id = ${agent.scope.orgId} AND a.environment = ${agent.scope.environment}`
    : sql``;
  return sql`WITH ${sql.join(ctes, sql`, `)}
    SELECT c.leg, c.id, c.score, c.rk, ${similarity} AS similarity
      FROM (${sql.join(parts, sql` UNION ALL `)}) c JOIN memories m ON m.id = c.id${agentRow}`;
}

type LegRow = {
  leg: 'k' | 'v' | 'a';
  id: string;
  score: number;
  rk: number | string;
  similarity: number;
};

/** The returned page's memories by id. */
async function pageOf(exec: Exec, ids: string[], columns: string): Promise<Map<string, MemoryRow>> {
  if (!ids.length) return new Map();
  const r = await exec(
    // One uuid[] parameter (the ids come from the legs' statement), so the text repeats: prepared on PGlite.
    sql`SELECT ${sql.raw(columns)} FROM memories m WHERE m.id = ANY(${`{${ids.join(',')}}`}::uuid[])`,
  );
  return new Map((r.rows as MemoryRow[]).map((row) => [row.id, row]));
}

export const DEFAULT_RECALL_MODE = 'hybrid';

export type RecallOptions = {
  /** false: a look, not a use (the dashboard's recall panel): accessCount and lastAccessedAt stay as they are. */
  countAccess?: boolean;
};

/** Which leg of the recall found a memory (shown in the dashboard's recall panel). */
export type FoundBy = 'vector' | 'keyword' | 'both';
type Found = Ranked & { foundBy: FoundBy };

export async function recall(ctx: MemoryContext, s: Scope, input: RecallInput, opts: RecallOptions = {}) {
  // The agent is checked in the legs' statement (a row `a`), not by a statement of its own.
  if (input.agentId && !isUuid(input.agentId)) throw errors.agentNotFound();
  if (input.collectionId) await requireCollection(ctx, s, input.collectionId);
  const mode = input.mode ?? DEFAULT_RECALL_MODE;
  const tiers = input.tiers ?? (input.tier ? [input.tier] : DEFAULT_TIERS);
  const deps = ctx.deps;
  // Only the vectors of the organization's active embedder are comparable with the query (pending
  // memories have none yet and are not recalled).
  const [q, stats] = await Promise.all([embedForRecall(ctx, s.orgId, input.query), termStats(deps, s)]);
  const e = embedderSql(q.model, q.dimension, toVectorLiteral(q.vector), q.generation);
  const where = sql`${whereOf(s, { ...input, tiers: [...new Set(tiers)] })} AND ${e.filter}`;
  // `similarity` is the cosine of the query's and the memory's embeddings (clamped to 0..1) whichever
  // leg found the memory, so `threshold` means the same in every mode.
  const similarity = sql`greatest(0, 1 - ${e.distance})`;
  const pool = mode === 'hybrid' ? Math.max(input.limit * 3, 30) : input.limit;
  // Per-query work outside the transaction (word look-ups are cached), so it holds the connection briefly.
  const [weighted, plan] = await Promise.all([
    mode === 'keyword' ? null : weightedQueryVector(deps, stats, q.model, input.query, q.vector.length),
    mode === 'vector'
      ? null
      : planBm25(deps, stats, { words: [input.query], phrases: [], excluded: [] }, input.query),
  ]);
  const vdist = weighted
    ? embedderSql(q.model, q.dimension, toVectorLiteral(weighted), q.generation).distance
    : e.distance;

  const narrowedBeyondAgent = Boolean(
    input.collectionId ||
      input.type ||
      (input.metadata && Object.keys(input.metadata).length) ||
      input.tags?.length ||
      new Set(tiers).size !== DEFAULT_TIERS.length ||
      tiers.some((t) => !DEFAULT_TIERS.includes(t)),
  );
  const narrowed = Boolean(input.agentId) || narrowedBeyondAgent;
  // The agent's memories (all tiers: an upper bound), when the agent is the only narrowing filter.
  const agentSize = input.agentId && !narrowedBeyondAgent ? stats.byAgent.get(input.agentId) : undefined;
  const local = parseLocalEmbedderId(q.model) !== null;
  const weights = local ? RECALL_TUNING.localLegWeights : RECALL_TUNING.legWeights;
  const { ranked, page } = await inRecallTx(
    deps,
    where,
    stats.n,
    narrowed,
    pool,
    async (p, hnsw) => {
      // The HNSW settings are for the vector leg's walk; the keyword leg's plan does not depend on them
      // (its sort has no alternative), so both legs run as one statement after them.
      if (mode !== 'keyword') await hnsw();
      const r = await p.legs(
        legsSql(
          where,
          pool,
          similarity,
          mode === 'keyword' ? null : { dist: vdist, exact: p.small },
          mode === 'vector' ? null : plan,
          input.agentId ? { scope: s, id: input.agentId } : undefined,
        ),
      );
      const rows = r.rows as LegRow[];
      const byKeyword: (Scored & { rk: number })[] = [];
      const byVector: (Scored & { d: number })[] = [];
      let agentFound = false;
      for (const row of rows) {
        const base = { id: row.id, similarity: Number(row.similarity) };
        if (row.leg === 'a') agentFound = true;
        else if (row.leg === 'k') byKeyword.push({ ...base, score: Number(row.score), rk: Number(row.rk) });
        else byVector.push({ ...base, score: -Number(row.score), d: Number(row.score) });
      }
      // BM25's rank; the vector leg's distance (HNSW's relaxed order is only nearly sorted), then id.
      if (input.agentId && !agentFound) throw errors.agentNotFound();
      byKeyword.sort((a, b) => a.rk - b.rk);
      byVector.sort((a, b) => a.d - b.d || (a.id < b.id ? -1 : 1));
      const fused: Found[] =
        mode === 'keyword'
          ? byKeyword.map((x) => ({ ...x, foundBy: 'keyword' as const }))
          : mode === 'vector'
            ? byVector.map((x) => ({ ...x, foundBy: 'vector' as const }))
            : RECALL_TUNING.fusion === 'relative'
              ? fuseRelative(byVector, byKeyword, weights)
              : fuse(byVector, byKeyword, RECALL_TUNING.rrfK, weights);
      const threshold = input.threshold ?? 0;
      const top = fused.filter((m) => m.similarity >= threshold).slice(0, input.limit);
      // Every recalled row has the query's embedder's vector in the active slot (the filter says so).
      const columns = embeddedMemoryColumns(e.slot.model, q.model);
      const ids = top.map((m) => m.id);
      return { ranked: top, page: await pageOf(p.page, ids, columns) };
    },
    agentSize,
  );

  // A memory deleted between the two statements is left out.
  const out = ranked.filter((m) => page.has(m.id));
  if (opts.countAccess !== false)
    ctx.access.record(
      out.map((m) => m.id),
      deps.clock.now(),
    );
  return {
    memories: out.map((m) => ({
      ...memoryView(page.get(m.id)!),
      similarity: Math.round(m.similarity * 1e6) / 1e6,
      foundBy: m.foundBy,
    })),
    total: out.length,
  };
}

/**
 * Reciprocal rank fusion: score = Σ 1 / (k + rank) over the vector and the keyword list. Chosen over a
 * weighted sum of normalised scores because BM25 scores have no fixed scale (they grow with the query's
 * length and the store's statistics) while cosines crowd together: ranks compare across both, need no
 * per-store calibration, and a memory both legs agree on rises above one that only one leg likes.
 */
export function fuse(
  a: Ranked[],
  b: Ranked[],
  k = RECALL_TUNING.rrfK,
  weights = RECALL_TUNING.legWeights,
): Found[] {
  const scored = new Map<string, { row: Ranked; score: number; legs: number }>();
  [a, b].forEach((list, leg) => {
    list.forEach((row, i) => {
      const e = scored.get(row.id) ?? {
        row: { ...row, similarity: Number(row.similarity) },
        score: 0,
        legs: 0,
      };
      e.score += weights[leg]! / (k + i + 1);
      e.legs |= 1 << leg;
      scored.set(row.id, e);
    });
  });
  return [...scored.values()]
    .sort((x, y) => y.score - x.score || y.row.similarity - x.row.similarity)
    .map((e) => ({ ...e.row, foundBy: e.legs === 3 ? 'both' : e.legs === 1 ? 'vector' : 'keyword' }));
}

/**
 * Relative score fusion, the default (measured against RRF, bench/memory-quality BENCH_SWEEP=1): each
 * leg's scores min-max normalised over its own list (best 1, last 0), then a weighted sum; a memory one
 * leg did not return gets 0 from it. Unlike ranks, the scores keep how far ahead a leg's best match is.
 */
export function fuseRelative(a: Scored[], b: Scored[], weights = RECALL_TUNING.legWeights): Found[] {
  const scored = new Map<string, { row: Ranked; score: number; legs: number }>();
  [a, b].forEach((list, leg) => {
    if (!list.length) return;
    const hi = Math.max(...list.map((r) => r.score));
    const lo = Math.min(...list.map((r) => r.score));
    for (const row of list) {
      const e = scored.get(row.id) ?? { row, score: 0, legs: 0 };
      e.score += weights[leg]! * (hi > lo ? (row.score - lo) / (hi - lo) : 1);
      e.legs |= 1 << leg;
      scored.set(row.id, e);
    }
  });
  return [...scored.values()]
    .sort((x, y) => y.score - x.score || y.row.similarity - x.row.similarity)
    .map((e) => ({ ...e.row, foundBy: e.legs === 3 ? 'both' : e.legs === 1 ? 'vector' : 'keyword' }));
}

/**
 * Keyword search: any word may match, ranked by BM25 (keyword-rank.ts for the syntax). A query whose
 * words appear nowhere matches nothing through the GIN index, so it answers an empty list at once.
 */
export async function searchMemories(ctx: MemoryContext, s: Scope, q: SearchInput) {
  if (q.agentId) await requireAgent(ctx, s, q.agentId);
  if (q.collectionId) await requireCollection(ctx, s, q.collectionId);
  const where = whereOf(s, { ...q, tiers: q.tier ? [q.tier] : DEFAULT_TIERS });
  const stats = await termStats(ctx.deps, s);
  const plan = await planBm25(ctx.deps, stats, parseKeywordQuery(q.q), q.q);
  const r = await ctx.deps.db.orm.execute(bm25TopSql(where, plan, q.limit));
  const rows = (r as unknown as { rows: (MemoryRow & { kscore: number })[] }).rows;
  return {
    memories: rows.map((m) => ({ ...memoryView(m), rank: Math.round(Number(m.kscore) * 1e6) / 1e6 })),
    total: rows.length,
  };
}
