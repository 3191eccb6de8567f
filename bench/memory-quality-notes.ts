// The short factual notes of bench/memory-quality.ts (its conversations are in memory-quality-data.ts),
// generated deterministically as they are.
import { rng } from './memory-corpus.ts';

export type Note = { text: string };
export type NoteQuestion = { question: string; evidence: number[] };

// Notes: short facts an assistant keeps about a small business, and questions in other words.
const FIRST =
  'Alice Bob Carmen Dmitri Elena Farid Grace Hiro Ines Jonas Kemal Lena Marco Nadia Omar Priya'.split(' ');
const VENDOR = 'Acme Globex Initech Umbrella Hooli Stark Wayne Wonka Tyrell Vandelay Soylent Cyberdyne'.split(
  ' ',
);
const CITY = 'Berlin Lisbon Tokyo Toronto Nairobi Madrid Oslo Seoul Lima Dublin Austin Lyon'.split(' ');
const DAY = 'Monday Tuesday Wednesday Thursday Friday'.split(' ');
const AMOUNT = '100 250 500 1000 5000'.split(' ');
const FOOD = 'peanuts shellfish gluten dairy eggs sesame'.split(' ');
const SERVICE = 'cleaning security catering printing hosting payroll'.split(' ');
const MONTH = 'January March May July September November'.split(' ');
const STREET = 'Elm Oak Pine Maple Cedar Birch'.split(' ');
const NOTE_KINDS: ((p: (xs: string[]) => string) => [string, string])[] = [
  (p) => {
    const [n, c, a] = [p(FIRST), p(CITY), p(AMOUNT)];
    return [
      `${n} runs the ${c} warehouse and approves every return over ${a} euros.`,
      `Who signs off refunds above ${a} euros at the ${c} depot?`,
    ];
  },
  (p) => {
    const [v, c, d] = [p(VENDOR), p(CITY), p(DAY)];
    return [
      `The ${v} invoice for ${c} is paid by bank transfer every second ${d} of the month.`,
      `How and when do we settle the ${v} bills for ${c}?`,
    ];
  },
  (p) => {
    const [n, c, f] = [p(FIRST), p(CITY), p(FOOD)];
    return [
      `${n} is allergic to ${f}; order lunch for the ${c} offsite without it.`,
      `What food restriction matters for ${n} at the ${c} offsite?`,
    ];
  },
  (p) => {
    const [v, sv, m, n] = [p(VENDOR), p(SERVICE), p(MONTH), p(FIRST)];
    return [
      `The ${v} ${sv} contract renews automatically in ${m} unless ${n} cancels it in writing.`,
      `When is the ${sv} agreement with ${v} up for renewal?`,
    ];
  },
  (p) => {
    const [c, d, st] = [p(CITY), p(DAY), p(STREET)];
    return [
      `Deliveries to the ${c} shop arrive ${d} mornings through the back door on ${st} Street.`,
      `Which street do couriers use at the ${c} store on ${d}s?`,
    ];
  },
  (p) => {
    const [n, v, c] = [p(FIRST), p(VENDOR), p(CITY)];
    return [
      `${n} prefers phone calls to email and handles the ${v} account in ${c}.`,
      `How should I reach the person managing ${v} in ${c}?`,
    ];
  },
];

/** `n` notes, each the only one its question asks about; one in four is asked. */
export function notes(n: number): { notes: Note[]; questions: NoteQuestion[] } {
  const r = rng(99);
  const p = (xs: string[]) => xs[Math.floor(r() * xs.length)]!;
  const out: Note[] = [];
  const qs: NoteQuestion[] = [];
  const seen = new Set<string>();
  for (let tries = 0; out.length < n && tries < n * 50; tries++) {
    const [text, q] = NOTE_KINDS[Math.floor(r() * NOTE_KINDS.length)]!(p);
    if (seen.has(q)) continue; // a second note the same question asks about would make it ambiguous
    seen.add(q);
    if (r() < 0.25) qs.push({ question: q, evidence: [out.length] });
    out.push({ text });
  }
  return { notes: out, questions: qs };
}
