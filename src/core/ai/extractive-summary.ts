import { tokenize } from './local-embedder.ts';

// The summariser used when no text model is configured (memory compaction): picks the sentences whose
// content words are most frequent across all the texts, keeps them in their original order, and never
// writes a word that was not in the input. Deterministic: the same texts give the same summary.

export const EXTRACTIVE_SUMMARY_MODEL = 'pier-local/extractive-v1';

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in ' +
    'into is it its just me my no not of on or our she so than that the their them then there these they ' +
    'this those to too us was we were what when where which who why will with would you your der die das ' +
    'und ist le la les et est de des el los las y en'
  ).split(' '),
);

export type SummaryOptions = { maxSentences?: number; maxChars?: number };

export function splitSentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?。！？])\s+(?=[\p{Lu}\p{N}"'“(])|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function summarizeExtractive(texts: string[], opts: SummaryOptions = {}): string {
  const maxSentences = opts.maxSentences ?? 5;
  const maxChars = opts.maxChars ?? 1200;
  const sentences: { text: string; order: number; words: string[] }[] = [];
  for (const t of texts) {
    for (const s of splitSentences(t)) {
      sentences.push({
        text: s,
        order: sentences.length,
        words: tokenize(s).filter((w) => !STOPWORDS.has(w) && w.length > 1),
      });
    }
  }
  if (sentences.length === 0) return '';
  const freq = new Map<string, number>();
  for (const s of sentences) for (const w of new Set(s.words)) freq.set(w, (freq.get(w) ?? 0) + 1);
  const seen = new Set<string>();
  const scored = sentences
    .filter((s) => {
      const key = s.text.toLowerCase();
      if (seen.has(key)) return false; // repeated sentences are said once
      seen.add(key);
      return true;
    })
    .map((s) => {
      const sum = s.words.reduce((acc, w) => acc + (freq.get(w) ?? 0), 0);
      // Length-normalised so long sentences do not win by size alone; a small bonus for opening sentences.
      const score = s.words.length ? sum / Math.sqrt(s.words.length) : 0;
      return { ...s, score: score * (s.order === 0 ? 1.15 : 1) };
    })
    .sort((a, b) => b.score - a.score || a.order - b.order);
  const picked: typeof scored = [];
  let chars = 0;
  for (const s of scored) {
    if (picked.length >= maxSentences) break;
    if (picked.length > 0 && chars + s.text.length + 1 > maxChars) continue;
    picked.push(s);
    chars += s.text.length + 1;
  }
  const out = picked
    .sort((a, b) => a.order - b.order)
    .map((s) => s.text)
    .join(' ');
  return out.length > maxChars ? `${out.slice(0, maxChars - 1).trimEnd()}…` : out;
}
