// The built-in embedder used when no model is configured: hashed word unigrams, word bigrams and character
// trigrams (signed feature hashing), log-scaled and L2-normalised. Deterministic, no network, ~0.05 ms per
// sentence. It captures lexical overlap (shared words, shared stems through the trigrams), not meaning:
// paraphrases that share no vocabulary score low — see docs/benchmarks.md for its measured quality.

export type Embedder = {
  id: string;
  dimension: number;
  embed(texts: string[]): Promise<number[][]>;
};

const STOPWORDS = new Set(
  'a an the and or but of to in on at for with by from as is are was were be been being it its this that these those i me my we our you your he she they them their his her do does did has have had not no so than then there here what which who whom when where why how will would can could should may might must shall about into over under up down out also just very'.split(
    ' ',
  ),
);

function tokens(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** A crude suffix stripper so "prefers", "preferred" and "preference" share a feature. */
function stem(w: string): string {
  if (w.length <= 4) return w;
  return w.replace(/(ations?|ingly|ings?|edly|ed|ly|es|s|ment|ness|ence|ance)$/, '') || w;
}

// FNV-1a, 32-bit: fast and stable across processes and versions (the stored vectors depend on it).
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function addFeature(v: Float64Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  const idx = h % v.length;
  v[idx]! += (h & 0x80000000 ? -1 : 1) * weight;
}

export function embedText(text: string, dimension: number): number[] {
  const v = new Float64Array(dimension);
  const words = tokens(text);
  const content = words.filter((w) => !STOPWORDS.has(w));
  const counts = new Map<string, number>();
  const bump = (f: string, w: number) => counts.set(f, (counts.get(f) ?? 0) + w);
  for (const w of content) {
    bump(`w:${stem(w)}`, 1);
    const padded = `^${w}$`;
    for (let i = 0; i + 3 <= padded.length; i++) bump(`c:${padded.slice(i, i + 3)}`, 0.25);
  }
  for (let i = 0; i + 1 < content.length; i++) bump(`b:${stem(content[i]!)} ${stem(content[i + 1]!)}`, 0.5);
  // A text of stopwords only still gets a vector (otherwise it would be all zeros).
  if (counts.size === 0) for (const w of words) bump(`w:${w}`, 1);
  if (counts.size === 0) bump(`t:${text}`, 1);
  for (const [f, c] of counts) addFeature(v, f, Math.log1p(c));
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  return Array.from(v, (x) => Math.round((x / norm) * 1e6) / 1e6);
}

export function createLocalEmbedder(opts: { dimension?: number } = {}): Embedder {
  const dimension = opts.dimension ?? 384;
  return {
    id: `pier-local/hash-${dimension}-v1`,
    dimension,
    embed: async (texts) => texts.map((t) => embedText(t, dimension)),
  };
}
