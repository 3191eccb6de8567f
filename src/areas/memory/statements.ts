// Inference without a model (docs/memory.md, "Inference"): a message becomes the self-contained
// statements it makes, and two statements are compared for exact and near duplicates. Deterministic and
// lexical: it never invents text, and it cannot tell that "lives in Lisbon" contradicts "lives in Berlin"
// (a model can).

/** Clauses joined by a comma or "and"/"but" split where the next one starts with its own subject. */
const CLAUSE_SPLIT =
  /\s*(?:;|,\s*(?:and|but|so)?|\s(?:and|but)\s)\s*(?=(?:I|I'm|I've|I'd|we|you|he|she|they|it|my|our|his|her|their|the|this|that|these|those)\b\s+\S+\s+\S+)/;
const PLEASANTRY =
  /^(hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|nice|yes|no|yeah|yep|nope|bye|good (morning|night|evening))\b[\s!.,]*$/i;
const MIN_WORDS = 3;

const words = (s: string) => s.split(/\s+/).filter(Boolean);

function tidy(s: string): string {
  const t = s
    .trim()
    .replace(/^[-*•\d.)\s]+(?=\S)/, '')
    .replace(/[,;:\s]+$/, '');
  if (!t) return '';
  const first = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?…"')\]]$/.test(first) ? first : `${first}.`;
}

/**
 * The statements a message makes: sentences (and lines, and list items), each cut further at clause
 * boundaries that start a new subject ("I moved to Lisbon last month, the Berlin flat is sold" → two).
 * Questions, pleasantries and fragments under three words state nothing and are dropped.
 */
export function splitStatements(text: string): string[] {
  const out: string[] = [];
  const sentences = text
    .split(/\n+|(?<=[.!?…])\s+(?=["'(]?[A-Z0-9])/)
    .map((s) => s.trim())
    .filter(Boolean);
  for (const sentence of sentences) {
    if (/\?\s*["')]?$/.test(sentence)) continue;
    for (const clause of sentence.split(CLAUSE_SPLIT)) {
      const t = tidy(clause);
      if (!t || words(t).length < MIN_WORDS || PLEASANTRY.test(t)) continue;
      out.push(t);
    }
  }
  return out;
}

const STOP = new Set(
  'a an the and or but of to in on at for with by from is are was were be been am i me my we our you your he she it its they their this that these those do did does have has had not no so as just very really also then there here'.split(
    ' ',
  ),
);

/** The content words of a statement, lower-cased, crude plural "s" removed. */
export function contentWords(s: string): Set<string> {
  const out = new Set<string>();
  for (const w of s.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []) {
    const t = w.replace(/'s$/, '');
    if (STOP.has(t)) continue;
    out.add(t.length > 3 ? t.replace(/(?<!s)s$/, '') : t);
  }
  return out;
}

export type Likeness = 'exact' | 'near' | 'fuller' | 'different';

/** Near duplicates share at least this share of their content words (Jaccard). */
export const NEAR_DUPLICATE_JACCARD = 0.8;

/**
 * How a new statement compares with a stored one: the same words (case, spacing and punctuation aside)
 * → `exact`; nearly the same content words → `near`; every stored content word and more → `fuller` (the
 * new one says what the stored one said and more: it supersedes it); else `different`.
 */
export function compareStatements(fresh: string, stored: string): Likeness {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  if (norm(fresh) === norm(stored)) return 'exact';
  const a = contentWords(fresh);
  const b = contentWords(stored);
  if (!a.size || !b.size) return 'different';
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  if (shared === b.size && a.size > b.size && b.size >= 2) return 'fuller';
  if (shared / (a.size + b.size - shared) >= NEAR_DUPLICATE_JACCARD) return 'near';
  return 'different';
}
