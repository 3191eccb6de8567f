import { sql } from 'drizzle-orm';
import { perObject } from '../../core/per-object.ts';
import type { Deps } from '../../deps.ts';
import type { Scope } from './context.ts';
import { textArrayParam } from './sql-arrays.ts';

// Term statistics of an organization's memories (per environment): how many memories there are, their
// mean length in lexemes, and in how many memories each lexeme occurs. They give BM25 its IDF and length
// normalisation and weigh the words of a recall query (frequent words carry little), so they come from
// the organization's own texts, in any language or format, with no fixed list of words.
//
// Computing them reads every memory's tsvector (ts_stat), far too much per recall, so they are cached
// per process: a write in this process marks its organization stale, and any entry is stale after
// STATS_TTL_MS (writes made by other processes). A stale small store (≤ SYNC_REFRESH_MAX memories, where
// the scan costs little) is refreshed before answering, so what was just stored counts at once; a stale
// large store answers from the previous figures while one refresh runs in the background — a few
// hundred new memories barely move the figures of thousands. The cache is only a cache: losing it costs
// one scan.

export type TermStats = {
  n: number;
  avgdl: number;
  df: Map<string, number>;
  /** Memories per agent, every tier (an upper bound of what a recall filtered by the agent scans). */
  byAgent: Map<string, number>;
};

export const STATS_TTL_MS = 60_000;
const SYNC_REFRESH_MAX = 2_000;
const MAX_ORGS = 200;
const MAX_WORDS = 50_000;

type Entry = { stats: TermStats; at: number; dirty: boolean; refreshing: Promise<TermStats> | null };
const cacheOf = perObject<Deps, Map<string, Entry>>(() => new Map());
const lexemeCacheOf = perObject<Deps, Map<string, string[]>>(() => new Map());
const keyOf = (s: Scope) => `${s.orgId}:${s.environment}`;

async function compute(deps: Deps, s: Scope): Promise<TermStats> {
  // ts_stat takes its query as text: both values are quoted literals (the org id is a uuid, the
  // environment one of two words), so nothing from a request reaches it unquoted.
  const inner = `SELECT search_tsv FROM memories WHERE org_id = '${s.orgId.replace(/'/g, "''")}' AND environment = '${s.environment.replace(/'/g, "''")}'`;
  const [totals, words, agents] = await Promise.all([
    deps.db.orm.execute(sql`SELECT count(*)::int AS n, coalesce(avg(length(search_tsv)), 0)::float8 AS avgdl
      FROM memories WHERE org_id = ${s.orgId} AND environment = ${s.environment}`),
    deps.db.orm.execute(sql`SELECT word, ndoc FROM ts_stat(${inner})`),
    deps.db.orm.execute(sql`SELECT agent_id, count(*)::int AS n FROM memories
      WHERE org_id = ${s.orgId} AND environment = ${s.environment} AND agent_id IS NOT NULL GROUP BY agent_id`),
  ]);
  const t = (totals as unknown as { rows: { n: number; avgdl: number }[] }).rows[0]!;
  const df = new Map<string, number>();
  for (const r of (words as unknown as { rows: { word: string; ndoc: number }[] }).rows)
    df.set(r.word, Number(r.ndoc));
  const byAgent = new Map<string, number>();
  for (const r of (agents as unknown as { rows: { agent_id: string; n: number }[] }).rows)
    byAgent.set(r.agent_id, Number(r.n));
  return { n: Number(t.n), avgdl: Math.max(1, Number(t.avgdl)), df, byAgent };
}

function refresh(deps: Deps, s: Scope, e: Entry | undefined): Promise<TermStats> {
  if (e?.refreshing) return e.refreshing;
  const cache = cacheOf(deps);
  const entry: Entry = e ?? {
    stats: { n: 0, avgdl: 1, df: new Map(), byAgent: new Map() },
    at: 0,
    dirty: true,
    refreshing: null,
  };
  const startedAt = Date.now();
  entry.dirty = false; // a write during the scan marks it dirty again
  entry.refreshing = compute(deps, s)
    .then((stats) => {
      entry.stats = stats;
      entry.at = startedAt;
      return stats;
    })
    .catch((err) => {
      entry.dirty = true;
      throw err;
    })
    .finally(() => {
      entry.refreshing = null;
    });
  if (!e) {
    if (cache.size >= MAX_ORGS) cache.delete(cache.keys().next().value!);
    cache.set(keyOf(s), entry);
  }
  return entry.refreshing;
}

/** The organization's term statistics (see the top of this file for how current they are). */
export async function termStats(deps: Deps, s: Scope): Promise<TermStats> {
  const e = cacheOf(deps).get(keyOf(s));
  if (!e) return refresh(deps, s, undefined);
  const stale = e.dirty || Date.now() - e.at > STATS_TTL_MS;
  if (!stale) return e.stats;
  if (e.stats.n <= SYNC_REFRESH_MAX || e.at === 0) return refresh(deps, s, e);
  refresh(deps, s, e).catch((err) => deps.log.warn({ err }, 'memory term statistics refresh failed'));
  return e.stats;
}

/** A write changed the organization's memories: its statistics are stale. */
export function termStatsChanged(deps: Deps, s: Scope): void {
  const e = cacheOf(deps).get(keyOf(s));
  if (e) e.dirty = true;
}

/** BM25's IDF (Robertson–Spärck Jones, kept positive): rare lexemes weigh most. */
export function idf(stats: TermStats, lexeme: string): number {
  const df = stats.df.get(lexeme) ?? 0;
  return Math.log(1 + (stats.n - df + 0.5) / (df + 0.5));
}

/**
 * Each word's lexemes under PostgreSQL's `english` configuration (what `search_tsv` holds); [] for a
 * stop word. Cached per process: the mapping never changes, and a query's words are mostly known.
 */
export async function lexemesOf(deps: Deps, words: string[]): Promise<Map<string, string[]>> {
  const cache = lexemeCacheOf(deps);
  const missing = [...new Set(words.filter((w) => !cache.has(w)))];
  if (missing.length) {
    const r = await deps.db.orm.execute(sql`SELECT w, tsvector_to_array(to_tsvector('english', w)) AS l
      FROM unnest(${textArrayParam(missing)}) AS w`);
    if (cache.size + missing.length > MAX_WORDS) cache.clear();
    for (const row of (r as unknown as { rows: { w: string; l: string[] | string }[] }).rows)
      cache.set(row.w, parseArray(row.l));
  }
  return new Map(words.map((w) => [w, cache.get(w) ?? []]));
}

/** text[] arrives as an array from node-postgres and PGlite alike, but be safe with the literal form. */
function parseArray(v: string[] | string): string[] {
  if (Array.isArray(v)) return v;
  const inner = v.replace(/^\{|\}$/g, '');
  return inner ? inner.split(',').map((x) => x.replace(/^"|"$/g, '')) : [];
}
