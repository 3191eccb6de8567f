import { embedLocal, parseLocalEmbedderId, tokenize } from '../../core/ai/local-embedder.ts';
import type { Deps } from '../../deps.ts';
import { idf, lexemesOf, type TermStats } from './term-stats.ts';

// The built-in embedder hashes every word alike, so in a recall query "what", "did" and a name said in
// every memory outweighed the words that carry the meaning. For that embedder the query is embedded
// again with each word weighted by its IDF among the organization's memories (term-stats.ts); a stop
// word (no lexeme) weighs nothing. Stored vectors stay unweighted, so nothing needs re-embedding as the
// statistics move. A real embedding model's query vector is used as it is (null here).

export async function weightedQueryVector(
  deps: Deps,
  stats: TermStats,
  model: string,
  query: string,
  dimension: number,
): Promise<number[] | null> {
  if (!parseLocalEmbedderId(model) || stats.n === 0) return null;
  const words = tokenize(query);
  const lex = await lexemesOf(deps, words);
  const weight = new Map<string, number>();
  for (const w of words) {
    const ls = lex.get(w) ?? [];
    weight.set(w, ls.length ? Math.max(...ls.map((l) => idf(stats, l))) : 0);
  }
  if (![...weight.values()].some((x) => x > 0)) return null; // only stop words: keep them all
  return Array.from(embedLocal(query, dimension, (w) => weight.get(w) ?? 0));
}
