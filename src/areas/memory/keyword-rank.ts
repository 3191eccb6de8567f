import { type SQL, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { MEMORY_SQL_COLUMNS } from './memory-view.ts';
import { textArrayParam } from './sql-arrays.ts';
import { idf, lexemesOf, type TermStats } from './term-stats.ts';

// BM25 in SQL over the stored `search_tsv` (PostgreSQL's `english` lexemes: stemmed, stop words gone),
// the same on PGlite and PostgreSQL. ts_rank_cd is not BM25 (no saturation, no length normalisation, no
// IDF), so the score is computed here: Σ idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)) over the
// query's lexemes, with tf from the lexeme's positions, dl the memory's number of lexemes, and idf and
// avgdl from the organization's term statistics (term-stats.ts).
//
// Query syntax (the keyword search endpoint; recall passes plain text): any word may match and more
// matching words rank higher; "quoted phrases" must appear as phrases; -word and -"phrase" exclude;
// `or` is accepted and changes nothing (any word already matches).

export const BM25 = { k1: 1.2, b: 0.75 };
export const KEYWORD_TUNING = {
  /**
   * Candidates are gathered from the rarest lexemes until their document frequencies sum to this. 600
   * scored the same as 2,000 on bench/memory-quality (chats and notes) with far fewer rows scored per
   * recall (decision 048).
   */
  candidateBudget: 600,
};

export type KeywordQuery = { words: string[]; phrases: string[]; excluded: string[] };

export function parseKeywordQuery(q: string): KeywordQuery {
  const out: KeywordQuery = { words: [], phrases: [], excluded: [] };
  const re = /(-?)"([^"]*)"|(\S+)/g;
  for (let m = re.exec(q); m; m = re.exec(q)) {
    if (m[2] !== undefined) {
      const p = m[2].trim();
      if (p) (m[1] ? out.excluded : out.phrases).push(p);
    } else {
      const w = m[3]!;
      if (w.startsWith('-') && w.length > 1) out.excluded.push(w.slice(1));
      else if (w.toLowerCase() !== 'or') out.words.push(w);
    }
  }
  return out;
}

/** Words as PostgreSQL's parser would split them for lexemes (case is left to it). */
function wordsOf(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

/**
 * How often `lexeme` occurs in the memory, without unnesting its tsvector (a set-returning call per row
 * cost 0.2 ms each on PGlite). With every weight 1, ts_rank of a one-lexeme query is S(tf)/ζ(2), where
 * S(tf) = Σ_{j ≤ tf} 1/j² (PostgreSQL's calc_rank_or); ζ(2) − S(tf) ≈ 1/(tf + ½), so
 * (1/ζ(2)) / (1 − rank) ≈ tf + ½ and its floor is tf exactly for the counts that occur in memories (0 when
 * absent). ranking.test.ts pins this on both databases, so a change in PostgreSQL's ranking would fail a
 * test, not skew results silently.
 */
export function termFrequency(lexeme: string): SQL {
  const q = `'${lexeme.replace(/'/g, "''")}'`;
  return sql`floor(0.6079271018540267 / greatest(1e-9, 1 - ts_rank('{1,1,1,1}'::float4[], m.search_tsv, ${q}::tsquery, 0)))`;
}

export type Bm25Plan = {
  /** The query's distinct lexemes with their IDF (empty: nothing to rank by but tags). */
  terms: { lexeme: string; idf: number }[];
  /** WHERE part: the row matches (tags included) and honours phrases and exclusions. */
  match: SQL;
  /** Per-row inputs of the score, computed once per candidate row of `m`: tf0…tfN, kn, tagged. */
  inputs: SQL;
  /** The BM25 score (+ a tag bonus) over the columns of `inputs`, as row `s`. */
  score: SQL;
};

function tsq(lexemes: string[]): SQL {
  const text = lexemes.map((l) => `'${l.replace(/'/g, "''")}'`).join(' | ');
  return sql`${text}::tsquery`;
}

/** Plans the BM25 leg for a query (one cached look-up of its words' lexemes). */
export async function planBm25(
  deps: Deps,
  stats: TermStats,
  kq: KeywordQuery,
  rawQuery: string,
): Promise<Bm25Plan> {
  const positive = [...kq.words, ...kq.phrases].flatMap(wordsOf).map((w) => w.toLowerCase());
  const lex = await lexemesOf(deps, positive);
  const lexemes = [...new Set([...lex.values()].flat())];
  const terms = lexemes.map((l) => ({ lexeme: l, idf: idf(stats, l) }));
  // Candidates from the rarest lexemes first: a memory matching only the commonest ones would rank at
  // the bottom anyway, and gathering every memory that says "going" costs a scan of most of the store.
  const byRarity = [...lexemes].sort((a, b) => (stats.df.get(a) ?? 0) - (stats.df.get(b) ?? 0));
  const gather: string[] = [];
  let budget = 0;
  for (const l of byRarity) {
    const df = stats.df.get(l) ?? 0;
    if (gather.length && budget + df > KEYWORD_TUNING.candidateBudget) break;
    gather.push(l);
    budget += df;
  }
  const tagWords = [...new Set([rawQuery.trim(), ...kq.words, ...kq.words.map((w) => w.toLowerCase())])];
  // One parameter (a text[] literal), so the statement's text does not change with the query's words.
  const tagHit = sql`m.tags && ${textArrayParam(tagWords)}`;
  const parts: SQL[] = [];
  const textHit = gather.length ? sql`m.search_tsv @@ ${tsq(gather)}` : sql`false`;
  parts.push(sql`(${textHit} OR ${tagHit})`);
  for (const p of kq.phrases) parts.push(sql`m.search_tsv @@ phraseto_tsquery('english', ${p})`);
  for (const x of kq.excluded) parts.push(sql`NOT (m.search_tsv @@ phraseto_tsquery('english', ${x}))`);
  const { k1, b } = BM25;
  const tagBonus =
    (k1 + 1) *
    Math.max(
      1,
      terms.reduce((a, t) => a + t.idf, 0),
    );
  // Each term's tf is a ts_rank call, the costliest part of the leg: `inputs` computes it once per row
  // (the score uses tf twice), and the score reads the columns (decision 070). What does not depend on
  // the term is folded once: per row the length norm kn = k1·(1 − b + b·dl/avgdl), per term the constant
  // idf·(k1 + 1), so each term costs three operations per row (decision 092).
  const inputs = sql.join(
    [
      sql`${k1 * (1 - b)}::float8 + ${(k1 * b) / stats.avgdl}::float8 * length(m.search_tsv) AS kn`,
      sql`(${tagHit}) AS tagged`,
      ...terms.map((t, i) => sql`${termFrequency(t.lexeme)} AS ${sql.raw(`tf${i}`)}`),
    ],
    sql`, `,
  );
  const bm25 = terms.length
    ? sql.join(
        terms.map((t, i) => {
          const tf = sql.raw(`s.tf${i}`);
          return sql`${t.idf * (k1 + 1)}::float8 * ${tf} / (${tf} + s.kn)`;
        }),
        sql` + `,
      )
    : sql`0::float8`;
  // A tag equal to the query or one of its words is a deliberate label: it counts as much as every word
  // of the query matching at full saturation, so a tagged memory ranks above one that only says it.
  const score = sql`(${bm25} + CASE WHEN s.tagged THEN ${tagBonus}::float8 ELSE 0 END)`;
  return { terms, match: sql.join(parts, sql` AND `), inputs, score };
}

/**
 * Top `limit` rows of `where` by BM25, with their score as `kscore` and any extra columns. The score is
 * computed for every candidate, the memory's columns only for the top rows (fetched by id: OFFSET 0
 * keeps the planner from turning the look-ups into a scan of the whole table, and from pulling the
 * per-row inputs up into the score, which would compute each tf twice).
 */
export function bm25TopSql(where: SQL, plan: Bm25Plan, limit: number, extra: SQL = sql``): SQL {
  return sql`
    SELECT ${sql.raw(MEMORY_SQL_COLUMNS)}, k.kscore ${extra}
      FROM (${bm25IdsSql(where, plan, limit)}) k
      CROSS JOIN LATERAL (SELECT * FROM memories x WHERE x.id = k.id OFFSET 0) m
     ORDER BY k.kscore DESC, k.created_at DESC, k.id`;
}

/** The top `limit` rows of `where` by BM25 as `id, kscore, created_at` only (recall reads columns later). */
export function bm25IdsSql(where: SQL, plan: Bm25Plan, limit: number): SQL {
  return sql`SELECT s.id, ${plan.score} AS kscore, s.created_at
              FROM (SELECT m.id, m.created_at, ${plan.inputs} FROM memories m WHERE ${where} AND ${plan.match}
                    OFFSET 0) s
             ORDER BY kscore DESC, s.created_at DESC, s.id LIMIT ${limit}`;
}
