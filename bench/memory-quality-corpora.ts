// The corpora of bench/memory-quality.ts in one shape, each split once into a tuning half and a report
// half. Four sources, made independently of each other:
//   generated chats  — LoCoMo-like multi-session chats from templates (memory-quality-data.ts)
//   generated notes  — short business facts from templates, paraphrased questions (memory-quality-notes.ts)
//   written chats    — two chats written by hand, questions in other words (memory-quality-written.ts)
//   handbook         — a hand-written employee handbook, one paragraph per memory (memory-quality-handbook.ts)
// The split is fixed and does not depend on any result: within a corpus, questions in the order the
// corpus defines them alternate tuning (even places) / report (odd places). Choices (fusion weights,
// techniques) are made on the tuning half only; the report half is read, never tuned on.
import { conversations } from './memory-quality-data.ts';
import { handbook, handbookQuestions } from './memory-quality-handbook.ts';
import { notes } from './memory-quality-notes.ts';
import { writtenChats } from './memory-quality-written.ts';

export type Doc = { text: string; session?: number; date?: string };
export type Half = 'tuning' | 'report';
export type CorpusQuestion = { set: number; question: string; evidence: number[]; kind: string; half: Half };
/** `sets`: one agent each (one per conversation, as an assistant keeps one memory per user). */
export type Corpus = { name: string; sets: { name: string; docs: Doc[] }[]; questions: CorpusQuestion[] };

const half = (i: number): Half => (i % 2 === 0 ? 'tuning' : 'report');

export function corpora(nConv: number, nNotes: number): Corpus[] {
  const conv = conversations(nConv);
  const gen: Corpus = { name: 'generated chats', sets: [], questions: [] };
  for (let c = 0; c < nConv; c++) {
    const turns = conv.turns.filter((t) => t.conv === c);
    gen.sets.push({
      name: `generated chat ${c}`,
      docs: turns.map((t) => ({ text: `${t.speaker}: ${t.text}`, session: t.session, date: t.date })),
    });
  }
  conv.questions.forEach((q, i) => {
    const base = conv.turns.findIndex((t) => t.conv === q.conv);
    gen.questions.push({
      set: q.conv,
      question: q.question,
      evidence: q.evidence.map((e) => e - base),
      kind: q.kind,
      half: half(i),
    });
  });

  const n = notes(nNotes);
  const noteCorpus: Corpus = {
    name: 'generated notes',
    sets: [{ name: 'notes', docs: n.notes.map((x) => ({ text: x.text })) }],
    questions: n.questions.map((q, i) => ({ set: 0, ...q, kind: 'notes', half: half(i) })),
  };

  const written: Corpus = { name: 'written chats', sets: [], questions: [] };
  let wq = 0;
  writtenChats.forEach((chat, c) => {
    const docs: Doc[] = [];
    const at = new Map<string, number>();
    chat.sessions.forEach((s, si) => {
      for (const [speaker, text, key] of s.turns) {
        if (key) at.set(key, docs.length);
        docs.push({ text: `${speaker}: ${text}`, session: si, date: s.date });
      }
    });
    written.sets.push({ name: `written chat ${c}`, docs });
    for (const q of chat.questions)
      written.questions.push({
        set: c,
        question: q.q,
        evidence: q.keys.map((k) => need(at, k)),
        kind: q.kind,
        half: half(wq++),
      });
  });

  const at = new Map(handbook.map(([k], i) => [k, i]));
  const hb: Corpus = {
    name: 'handbook',
    sets: [{ name: 'handbook', docs: handbook.map(([, text]) => ({ text })) }],
    questions: handbookQuestions.map((q, i) => ({
      set: 0,
      question: q.q,
      evidence: q.keys.map((k) => need(at, k)),
      kind: q.kind,
      half: half(i),
    })),
  };
  return [gen, noteCorpus, written, hb];
}

function need(at: Map<string, number>, key: string): number {
  const i = at.get(key);
  if (i === undefined) throw new Error(`bench corpus: no turn or paragraph keyed ${key}`);
  return i;
}

const tok = (t: string) =>
  t
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/**
 * Plain Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N − df + .5)/(df + .5))) over lowercase letter/digit
 * tokens, no stemming, no stop words: the floor every retrieval system is measured against.
 */
export function bm25Index(texts: string[]) {
  const docs = texts.map(tok);
  const df = new Map<string, number>();
  for (const d of docs) for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
  const avgdl = docs.reduce((a, d) => a + d.length, 0) / docs.length;
  const N = docs.length;
  const idf = (w: string) => {
    const n = df.get(w) ?? 0;
    return Math.log(1 + (N - n + 0.5) / (n + 0.5));
  };
  const search = (query: string, k: number): number[] => {
    const q = [...new Set(tok(query))];
    const scores = docs.map((d, i) => {
      let s = 0;
      for (const w of q) {
        const tf = d.filter((x) => x === w).length;
        if (!tf) continue;
        s += (idf(w) * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / avgdl));
      }
      return [s, i] as const;
    });
    return scores
      .filter((x) => x[0] > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, k)
      .map((x) => x[1]);
  };
  return { search, idf };
}

/**
 * Pseudo-relevance feedback (RM3-like, by words): the `terms` rarest words of the first `top` results
 * that the query lacks (three letters or more, seen in at most a tenth of the texts) appended to it.
 */
export function expandQuery(
  query: string,
  topTexts: string[],
  idf: (w: string) => number,
  nDocs: number,
  terms = 4,
): string {
  const have = new Set(tok(query));
  const minIdf = Math.log(1 + (nDocs - nDocs / 10 + 0.5) / (nDocs / 10 + 0.5));
  const seen = new Map<string, number>();
  for (const t of topTexts)
    for (const w of new Set(tok(t)))
      if (w.length >= 3 && !have.has(w) && idf(w) >= minIdf) seen.set(w, (seen.get(w) ?? 0) + idf(w));
  const add = [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, terms);
  return add.length ? `${query} ${add.map((x) => x[0]).join(' ')}` : query;
}

/**
 * Context from neighbouring turns: a turn's score gains `weight` × the scores of the turns just before and
 * after it in the same session (a reply "Really well! …" inherits the question it answers). Scores are
 * 1 / (10 + rank) over the first results of a recall; returns the new order.
 */
export function withNeighbours(ranked: number[], docs: Doc[], weight: number, k: number): number[] {
  const base = new Map(ranked.map((d, r) => [d, 1 / (10 + r)]));
  const score = new Map<number, number>();
  for (const [d, s] of base) {
    score.set(d, (score.get(d) ?? 0) + s);
    for (const nb of [d - 1, d + 1]) {
      const same = docs[nb] && docs[nb]!.session !== undefined && docs[nb]!.session === docs[d]!.session;
      if (same) score.set(nb, (score.get(nb) ?? 0) + weight * s);
    }
  }
  return [...score.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k)
    .map((x) => x[0]);
}
