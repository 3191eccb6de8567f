import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { parseLocalEmbedderId } from '../../core/ai/local-embedder.ts';
import { queryPreparedBatch } from '../../core/db/pglite-prepared.ts';
import { isUuid } from '../../core/ids.ts';
import { requireAgent } from './agents.ts';
import { requireCollection } from './collections.ts';
import type { MemoryContext, Scope } from './context.ts';
import { toVectorLiteral } from './embedding.ts';
import { memoryErrors } from './errors.ts';
import { type Bm25Plan, bm25IdsSql, bm25TopSql, parseKeywordQuery, planBm25 } from './keyword-rank.ts';
import { embeddedMemoryColumns, MEMORY_SQL_COLUMNS, type MemoryRow, memoryView } from './memory-view.ts';
import { embedForRecall } from './org-embedder.ts';
import { weightedQueryVector } from './query-weights.ts';
import type { RecallInput, SearchInput } from './schema.ts';
import { textArrayParam } from './sql-arrays.ts';
import type { MemoryTier } from './tables.ts';
import { termStats } from './term-stats.ts';
import { anchoredBoost } from './time-anchors.ts';
import { eventEnd, resolveEventTime } from './time-expressions.ts';
import { embedderSql } from './vector-indexes.ts';

// Recall and keyword search. Recall has two legs: the vector leg (cosine similarity to the query's
// embedding) and the keyword leg (BM25, keyword-rank.ts); `hybrid`, the default, fuses them. Every
// filter sits in the WHERE clause of the same query that ranks, so a filter never empties a top-k
// picked beforehand.

export const RECALL_TUNING = {
  /** hnsw.ef_search: candidates the HNSW walk keeps; measured for recall@10 ≥ 0.95 (docs/benchmarks.md). */
  efSearch: 100,
  /**
   * ef_search for a store of at most `smallStoreMax` memories: ANN fidelity 0.998 at 40 over 6,000
   * memories, and the default recall's evidence found over a whole organization the same as at 64 and
   * as an exact vector leg (decisions 085, 092); above, efSearch (0.97 at 100,000).
   */
  smallStoreEfSearch: 40,
  smallStoreMax: 10_000,
  /** At or below this many matching rows the exact scan is both exact and fast, so no index is used. */
  exactScanMax: 2000,
  /**
   * Reciprocal rank fusion constant: 10 rather than the usual 60, so the first ranks of each leg count
   * (measured on bench/memory-quality: better at every leg weight tried, docs/benchmarks.md).
   */
  rrfK: 10,
  /**
   * Weights of the vector and the keyword leg. A real model's leg, which knows meaning, counts as much as
   * BM25 (not measurable here: no model on this machine). The built-in embedder's leg is a noisier copy of
   * the lexical evidence BM25 already has: on the tuning halves of bench/memory-quality's four corpora it
   * added nothing above the keyword leg, so it weighs 0 and only fills the places the keyword leg leaves
   * (by similarity), which also keeps the default never below the keyword leg alone (decision 140).
   */
  legWeights: [1, 1] as [number, number],
  localLegWeights: [0, 1] as [number, number],
  /**
   * How the legs are fused: a weighted sum of min-max normalised scores (measured better than RRF on both
   * the chats and the notes of bench/memory-quality, docs/memory.md), or reciprocal rank fusion.
   */
  fusion: 'relative' as 'rrf' | 'relative',
  /**
   * `relative` fusion with the built-in embedder: the keyword leg's BM25 scores divided by the leg's best
   * ('max': every keyword match keeps a share, so none falls behind a memory only the vector leg found), or
   * min-max scaled like the vector leg ('minmax': the leg's last match counts 0). A model's leg: min-max
   * (decision 049). Decision 140.
   */
  localKeywordScale: 'max' as 'minmax' | 'max',
  /**
   * Share of the larger leg weight added to memories of the time a hybrid query names: one whole leg, so
   * among the pooled candidates a memory of that time ranks above one of another time unless that one leads
   * by more than a leg (not measured on the bench yet: its corpora name few times; decision 123).
   */
  timeBoost: 1,
  /** PGlite: the recall's statement as a named prepared statement (decision 086); false for A/B benches. */
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
  eventFrom?: string;
  eventTo?: string;
};

/**
 * Whether the event period of memory `a` — [`eventAt`, `eventAt` + its precision), `createdAt` when it has no
 * `eventAt` — overlaps [from, to); either bound may be open.
 */
function eventOverlaps(a: string, from?: string, to?: string): SQL {
  const start = sql.raw(`coalesce(${a}.event_at, ${a}.created_at)`);
  const span =
    sql.raw(`CASE ${a}.event_precision WHEN 'day' THEN interval '1 day' WHEN 'week' THEN interval '7 days'
    WHEN 'month' THEN interval '1 month' WHEN 'year' THEN interval '1 year' ELSE interval '0' END`);
  const parts: SQL[] = [];
  if (to) parts.push(sql`${start} < ${to}::timestamptz`);
  if (from) parts.push(sql`(${start} >= ${from}::timestamptz OR ${start} + ${span} > ${from}::timestamptz)`);
  return parts.length ? sql.join(parts, sql` AND `) : sql`true`;
}

function whereOf(s: Scope, f: Filters): SQL {
  const parts: SQL[] = [
    sql`m.org_id = ${s.orgId}`,
    sql`m.environment = ${s.environment}`,
    sql`m.tier = ANY(${textArrayParam(f.tiers)})`,
  ];
  if (f.agentId) parts.push(sql`m.agent_id = ${f.agentId}`);
  if (f.collectionId) parts.push(sql`m.collection_id = ${f.collectionId}`);
  if (f.type) parts.push(sql`m.type = ${f.type}`);
  if (f.metadata && Object.keys(f.metadata).length)
    parts.push(sql`m.metadata @> ${JSON.stringify(f.metadata)}::jsonb`);
  if (f.tags?.length) parts.push(sql`m.tags @> ${textArrayParam(f.tags)}`);
  // The event period overlaps [eventFrom, eventTo): "February" finds a memory of "last month" said in March.
  if (f.eventFrom || f.eventTo) parts.push(eventOverlaps('m', f.eventFrom, f.eventTo));
  return sql.join(parts, sql` AND `);
}

/** The ranking query; `exact` hides the distance from the index ("+ 0"), forcing the exact scan. */
export function vectorTopKSql(where: SQL, dist: SQL, k: number, exact: boolean, similarity?: SQL): SQL {
  const order = exact ? sql`${dist} + 0` : dist;
  return sql`
    SELECT ${sql.raw(MEMORY_SQL_COLUMNS)}, ${similarity ?? sql`1 - ${dist}`} AS similarity, ${dist} AS d
      FROM memories m WHERE ${where} ORDER BY ${order} LIMIT ${k}`;
}
type Exec = (q: SQL) => Promise<{ rows: unknown[] }>;
/**
 * `statement`: runs the recall's statement, whose text repeats (every value a parameter): prepared on PGlite, with
 * the HNSW settings in the same protocol call once `hnsw()` asked for them.
 */
type Plan = { statement: Exec; small: boolean };

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
 * - plan_cache_mode force_generic_plan: the prepared recall statement (PGlite) is planned once, not per call
 *   (planning was ≈ 0.7 ms of a recall); with enable_sort off its generic plan is the same HNSW walk and
 *   GIN scan as a custom one (EXPLAIN (GENERIC_PLAN), decision 090). No effect on PostgreSQL's unnamed
 *   statements.
 * On PostgreSQL the settings need a transaction (BEGIN, set_config, the recall's statement, COMMIT). On
 * PGlite the settings and the recall's statement go in one protocol call as named prepared statements,
 * so they share the implicit transaction that its Sync ends: no BEGIN/COMMIT, nothing left set after
 * (decisions 086, 090, 092). Prepared statements are parsed once per PGlite instance and planned by
 * PostgreSQL's plan cache (core/db/pglite-prepared.ts).
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
    const statement: Exec = async (q) => {
      const statements = [...(withSettings ? [settings] : []), q].map((x) => {
        const { sql: text, params } = dialect.sqlToQuery(x);
        return { text, params };
      });
      return { rows: await queryPreparedBatch(pg, statements, false) };
    };
    return run({ statement, small }, async () => {
      withSettings = !small;
    });
  }
  if (small) return run({ statement: direct, small }, async () => {});
  return deps.db.orm.transaction(async (tx) => {
    const exec: Exec = (q) => tx.execute(q) as unknown as Promise<{ rows: unknown[] }>;
    return run({ statement: exec, small }, async () => {
      await exec(settings);
    });
  });
}

type Fusion = {
  mode: 'hybrid' | 'vector' | 'keyword';
  kind: 'rrf' | 'relative';
  rrfK: number;
  /** Weights of the vector and the keyword leg. */
  weights: [number, number];
  keywordScale: 'minmax' | 'max';
  threshold: number;
  limit: number;
  /** hybrid: memories whose event period overlaps the time the query names get `weight` more (decision 123). */
  timeBoost: { from: string; to: string; weight: number } | null;
};

/**
 * A whole recall in one statement (one round trip): each leg's top `k` ids and scores, their fusion, and
 * the memory columns of the returned page only. Leg 0 is the vector leg (its rows' similarity computed as
 * the HNSW walk reads them), leg 1 the keyword leg (BM25; its top rows looked up for their similarity).
 * `rk` is a row's place in its leg (vector: distance, then id; keyword: BM25's order — score, newest
 * first, id); `ord`, the vector leg's places before the keyword leg's, settles equal fused scores.
 * Fusion (`hybrid`): a weighted sum of each leg's min-max normalised scores (`relative`) or of
 * 1 / (rrfK + rk) (`rrf`); a memory a leg did not return gets 0 from it. One-leg modes keep the leg's order.
 */
function recallSql(
  where: SQL,
  k: number,
  similarity: SQL,
  vector: { dist: SQL; exact: boolean } | null,
  plan: Bm25Plan | null,
  f: Fusion,
  columns: string,
): SQL {
  const ctes: SQL[] = [];
  const legs: SQL[] = [];
  if (plan) {
    ctes.push(sql`kw AS MATERIALIZED (${bm25IdsSql(where, plan, k)})`);
    legs.push(
      sql`SELECT 1 AS leg, kw.id, kw.kscore AS score,
                 row_number() OVER (ORDER BY kw.kscore DESC, kw.created_at DESC, kw.id) AS rk,
                 ${similarity} AS similarity
            FROM kw JOIN memories m ON m.id = kw.id`,
    );
  }
  if (vector) {
    const order = vector.exact ? sql`${vector.dist} + 0` : vector.dist;
    ctes.push(
      sql`v AS MATERIALIZED (SELECT m.id, ${vector.dist} AS d, ${similarity} AS similarity
                               FROM memories m WHERE ${where} ORDER BY ${order} LIMIT ${k})`,
    );
    legs.push(
      sql`SELECT 0 AS leg, v.id, -v.d AS score, row_number() OVER (ORDER BY v.d, v.id) AS rk, v.similarity FROM v`,
    );
  }
  const [wv, wk] = f.weights;
  const weight = sql`CASE c.leg WHEN 0 THEN ${wv}::float8 ELSE ${wk}::float8 END`;
  const part =
    f.kind === 'rrf'
      ? sql`${weight} / (${f.rrfK}::float8 + c.rk)`
      : f.keywordScale === 'max'
        ? sql`${weight} * CASE WHEN c.leg = 1 THEN coalesce(c.score / nullif(max(c.score) OVER w, 0), 1)
                               WHEN max(c.score) OVER w > min(c.score) OVER w
                               THEN (c.score - min(c.score) OVER w) / (max(c.score) OVER w - min(c.score) OVER w)
                               ELSE 1 END`
        : sql`${weight} * CASE WHEN max(c.score) OVER w > min(c.score) OVER w
                             THEN (c.score - min(c.score) OVER w) / (max(c.score) OVER w - min(c.score) OVER w)
                             ELSE 1 END`;
  const boost = f.mode === 'hybrid' ? f.timeBoost : null;
  const order = boost
    ? sql`f.boosted DESC, f.similarity DESC, f.ord`
    : f.mode === 'hybrid'
      ? sql`f.fused DESC, f.similarity DESC, f.ord`
      : sql`f.ord`;
  const top = boost
    ? sql`SELECT f.*, f.fused + CASE WHEN ${eventOverlaps('bm', boost.from, boost.to)} THEN ${boost.weight}::float8 ELSE 0 END AS boosted
            FROM f JOIN memories bm ON bm.id = f.id WHERE f.similarity >= ${f.threshold}::float8
           ORDER BY boosted DESC, f.similarity DESC, f.ord LIMIT ${f.limit}`
    : sql`SELECT * FROM f WHERE f.similarity >= ${f.threshold}::float8 ORDER BY ${order} LIMIT ${f.limit}`;
  return sql`WITH ${sql.join(ctes, sql`, `)},
    c AS (${sql.join(legs, sql` UNION ALL `)}),
    f AS (SELECT n.id, sum(n.part) AS fused, bit_or(1 << n.leg) AS legs, max(n.similarity) AS similarity,
                 min(n.rk + n.leg * 1000000) AS ord
            FROM (SELECT c.*, ${part} AS part FROM c WINDOW w AS (PARTITION BY c.leg)) n GROUP BY n.id)
    SELECT f.legs AS "foundLegs", f.similarity AS "fusedSimilarity", ${sql.raw(columns)}
      FROM (${top}) f
      JOIN memories m ON m.id = f.id
     ORDER BY ${order}`;
}

export const DEFAULT_RECALL_MODE = 'hybrid';

export type RecallOptions = {
  /** false: a look, not a use (the dashboard's recall panel): accessCount and lastAccessedAt stay as they are. */
  countAccess?: boolean;
};

/** Which leg of the recall found a memory (shown in the dashboard's recall panel). */
export type FoundBy = 'vector' | 'keyword' | 'both';

export async function recall(ctx: MemoryContext, s: Scope, input: RecallInput, opts: RecallOptions = {}) {
  // An agent's recall that finds nothing checks the agent exists (below), so a found memory needs no check.
  if (input.agentId && !isUuid(input.agentId)) throw memoryErrors.agentNotFound();
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
  // leg found the memory, so `threshold` means the same in every mode. A text with no word the embedder
  // knows ("!!!") embeds to the zero vector, whose cosine distance is NaN, and greatest() keeps a NaN
  // (PostgreSQL orders it above every number): such a memory, or query, is 0 similar to everything.
  const similarity = sql`greatest(0, coalesce(nullif(1 - ${e.distance}, 'NaN'::float8), 0))`;
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
      input.eventFrom ||
      input.eventTo ||
      new Set(tiers).size !== DEFAULT_TIERS.length ||
      tiers.some((t) => !DEFAULT_TIERS.includes(t)),
  );
  const narrowed = Boolean(input.agentId) || narrowedBeyondAgent;
  // The agent's memories (all tiers: an upper bound), when the agent is the only narrowing filter.
  const agentSize = input.agentId && !narrowedBeyondAgent ? stats.byAgent.get(input.agentId) : undefined;
  const local = parseLocalEmbedderId(q.model) !== null;
  const weights = local ? RECALL_TUNING.localLegWeights : RECALL_TUNING.legWeights;
  const fusion: Fusion = {
    mode,
    kind: RECALL_TUNING.fusion,
    rrfK: RECALL_TUNING.rrfK,
    weights,
    keywordScale: local ? RECALL_TUNING.localKeywordScale : 'minmax',
    threshold: input.threshold ?? 0,
    limit: input.limit,
    timeBoost:
      timeBoostOf(input, deps.clock.now(), weights) ??
      (mode === 'hybrid'
        ? await anchoredBoost(recall, ctx, s, input, weights, RECALL_TUNING.timeBoost)
        : null),
  };
  // Every recalled row has the query's embedder's vector in the active slot (the filter says so).
  const columns = embeddedMemoryColumns(e.slot.model, q.model);
  const rows = await inRecallTx(
    deps,
    where,
    stats.n,
    narrowed,
    pool,
    async (p, hnsw) => {
      // The HNSW settings are for the vector leg's walk; the keyword leg's plan does not depend on them
      // (its sort has no alternative), so both legs run as one statement after them.
      if (mode !== 'keyword') await hnsw();
      const r = await p.statement(
        recallSql(
          where,
          pool,
          similarity,
          mode === 'keyword' ? null : { dist: vdist, exact: p.small },
          mode === 'vector' ? null : plan,
          fusion,
          columns,
        ),
      );
      return r.rows as (MemoryRow & { foundLegs: number; fusedSimilarity: number })[];
    },
    agentSize,
  );
  // An agent's recall that finds nothing may be for an agent that does not exist (404).
  if (input.agentId && !rows.length) await requireAgent(ctx, s, input.agentId);
  if (opts.countAccess !== false)
    ctx.access.record(
      rows.map((m) => m.id),
      deps.clock.now(),
    );
  return {
    memories: rows.map((m) => ({
      ...memoryView(m),
      similarity: Math.round(Number(m.fusedSimilarity) * 1e6) / 1e6,
      foundBy: FOUND_BY[Number(m.foundLegs)]!,
    })),
    total: rows.length,
  };
}

/**
 * The time a query names ("what did she do last month?"), resolved against `referenceTime` (else now), as a
 * boost for hybrid recall (`RECALL_TUNING.timeBoost`). Only the pooled candidates (each leg's top) can gain
 * it, so a memory of that time that matches nothing stays out. None when the recall filters by time itself
 * or `timeBoost` is false.
 */
function timeBoostOf(input: RecallInput, now: Date, weights: [number, number]): Fusion['timeBoost'] {
  if (input.timeBoost === false || input.eventFrom || input.eventTo) return null;
  const named = resolveEventTime(input.query, input.referenceTime ? new Date(input.referenceTime) : now);
  if (!named) return null;
  return {
    from: named.at.toISOString(),
    to: eventEnd(named).toISOString(),
    weight: RECALL_TUNING.timeBoost * Math.max(...weights),
  };
}

const FOUND_BY: Record<number, FoundBy> = { 1: 'vector', 2: 'keyword', 3: 'both' };

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
