// The built-in embedder used when no EMBEDDING_MODEL is configured: feature hashing of words, word pairs
// and character trigrams into a fixed number of dimensions, L2-normalised. Deterministic, no download, no
// network. It captures lexical overlap (shared words, shared word stems through trigrams), not meaning:
// "car" and "automobile" are unrelated to it. Limits are stated in docs/models.md.

export const LOCAL_EMBEDDER_DIMENSION = 384;
export const LOCAL_EMBEDDER_VERSION = 'v1';

export function localEmbedderModelId(dimension = LOCAL_EMBEDDER_DIMENSION): string {
  return `pier-local/hash-${dimension}-${LOCAL_EMBEDDER_VERSION}`;
}

/** Parses `pier-local/hash-<dim>-v1`; null when the id is not a local embedder id. */
export function parseLocalEmbedderId(id: string): { dimension: number } | null {
  const m = /^pier-local\/hash-(\d{2,4})-v1$/.exec(id);
  if (!m) return null;
  const dimension = Number(m[1]);
  return dimension >= 16 && dimension <= 4096 ? { dimension } : null;
}

// Feature weights: whole words carry most signal; pairs add word order; trigrams tolerate inflection and typos.
const WORD_WEIGHT = 1.0;
const BIGRAM_WEIGHT = 0.5;
const TRIGRAM_WEIGHT = 0.35;
const MAX_CHARS = 100_000;

function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // final avalanche so that the low bits (the bucket) and the top bit (the sign) are independent
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  return h >>> 0;
}

export function tokenize(text: string): string[] {
  return text
    .slice(0, MAX_CHARS)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

function add(vec: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature, 0x9e3779b9);
  const bucket = h % vec.length;
  vec[bucket]! += h & 0x80000000 ? -weight : weight;
}

/**
 * One text → a unit vector (all zeros for a text without letters or digits). `weightOf(word)` scales the
 * features of each word (its own, its trigrams and the pairs it is part of): recall weights a query's
 * words by how rare they are among the organization's memories (IDF), so "did" and a speaker's name stop
 * outweighing the words that carry the meaning. Stored vectors are unweighted: the weighting happens on
 * the query side only, where the current statistics are known, and stored vectors never need redoing.
 */
export function embedLocal(
  text: string,
  dimension = LOCAL_EMBEDDER_DIMENSION,
  weightOf?: (word: string) => number,
): Float32Array {
  const vec = new Float32Array(dimension);
  const words = tokenize(text);
  const counts = new Map<string, number>();
  const scale = new Map<string, number>();
  const bump = (f: string, wt: number) => {
    counts.set(f, (counts.get(f) ?? 0) + 1);
    scale.set(f, Math.max(scale.get(f) ?? 0, wt));
  };
  const wOf = weightOf ? words.map((w) => weightOf(w)) : null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const wt = wOf ? wOf[i]! : 1;
    bump(`w:${w}`, wt);
    if (i > 0) bump(`b:${words[i - 1]}_${w}`, wOf ? Math.sqrt(wOf[i - 1]! * wt) : 1);
    const padded = `<${w}>`;
    if (padded.length > 4)
      for (let j = 0; j + 3 <= padded.length; j++) bump(`c:${padded.slice(j, j + 3)}`, wt);
  }
  for (const [f, n] of counts) {
    const base = f.startsWith('w:') ? WORD_WEIGHT : f.startsWith('b:') ? BIGRAM_WEIGHT : TRIGRAM_WEIGHT;
    const wt = scale.get(f)!;
    if (wt > 0) add(vec, f, base * wt * (1 + Math.log(n))); // sublinear term frequency
  }
  let norm = 0;
  for (let i = 0; i < dimension; i++) norm += vec[i]! * vec[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < dimension; i++) vec[i]! /= norm;
  return vec;
}

export function embedLocalMany(texts: string[], dimension = LOCAL_EMBEDDER_DIMENSION): number[][] {
  return texts.map((t) => Array.from(embedLocal(t, dimension)));
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
