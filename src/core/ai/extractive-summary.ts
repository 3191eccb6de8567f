// The built-in summariser used when no model is configured: picks the most central sentences (those
// sharing the most words with the rest), drops near-repeats, and keeps them in their original order.
// It never invents text, so a summary only ever says what its sources said.

const WORD = /[\p{L}\p{N}]+/gu;

function words(s: string): Set<string> {
  return new Set((s.toLowerCase().match(WORD) ?? []).filter((w) => w.length > 2));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let inter = 0;
  for (const w of a) if (b.has(w)) inter++;
  return inter / (a.size + b.size - inter);
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function extractiveSummary(texts: string[], opts: { maxSentences?: number } = {}): string {
  const maxSentences = opts.maxSentences ?? 3;
  const all = texts.flatMap(sentences);
  if (all.length === 0) return '';
  const freq = new Map<string, number>();
  const bags = all.map(words);
  for (const bag of bags) for (const w of bag) freq.set(w, (freq.get(w) ?? 0) + 1);
  const scored = all.map((s, i) => {
    const bag = bags[i]!;
    let score = 0;
    for (const w of bag) score += freq.get(w)! - 1;
    return { s, i, bag, score: bag.size ? score / Math.sqrt(bag.size) : 0 };
  });
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  const picked: typeof scored = [];
  for (const c of scored) {
    if (picked.length >= maxSentences) break;
    // A sentence that mostly repeats one already picked adds nothing.
    if (picked.some((p) => p.s === c.s || jaccard(p.bag, c.bag) >= 0.6)) continue;
    picked.push(c);
  }
  picked.sort((a, b) => a.i - b.i);
  return picked
    .map((p) => (/[.!?]$/.test(p.s) ? p.s : `${p.s}.`))
    .join(' ')
    .slice(0, 4000);
}
