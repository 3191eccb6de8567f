import type { EventPrecision } from './tables.ts';

// The time a text speaks of, for the common English forms ("yesterday", "last month", "3 weeks ago",
// "in February", "on 3 March 2025", "2025-02-14"), resolved against the time the text was said. UTC
// throughout; weeks start on Monday (ISO). Not a general date parser: chrono-node would be, and is not a
// dependency (docs/memory.md, "Time"). What is not recognised gives null, never a guess.

export type EventTime = { at: Date; precision: EventPrecision };

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
export const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  'a couple of': 2,
  'a few': 3,
  several: 3,
};

const DAY = 86_400_000;
const utc = (y: number, m: number, d = 1) => new Date(Date.UTC(y, m, d));
const dayOf = (t: Date) => utc(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate());
const weekOf = (t: Date) => new Date(dayOf(t).getTime() - ((t.getUTCDay() + 6) % 7) * DAY);
const monthOf = (t: Date, plus = 0) => utc(t.getUTCFullYear(), t.getUTCMonth() + plus);
const yearOf = (t: Date, plus = 0) => utc(t.getUTCFullYear() + plus, 0);

/** A month name or its three-letter (or "sept") abbreviation → 0–11. */
function monthIndex(word: string): number {
  const w = word.toLowerCase().replace(/\.$/, '');
  if (w === 'sept') return 8;
  return MONTHS.findIndex((m) => m === w || (w.length === 3 && m.startsWith(w)));
}

const MONTH_RE =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?';
const NUM_RE =
  '(\\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few|several)';
const ORD = '(\\d{1,2})(?:st|nd|rd|th)?';

type Rule = { re: RegExp; resolve(m: RegExpExecArray, ref: Date): EventTime | null };

const valid = (d: Date) => (Number.isNaN(d.getTime()) ? null : d);
/** A day of a month; a month named without a year is the latest one not after the reference. */
function monthDay(month: number, day: number | null, year: number | null, ref: Date): EventTime | null {
  if (month < 0) return null;
  let y = year ?? ref.getUTCFullYear();
  if (year === null && utc(y, month, day ?? 1) > ref) y -= 1;
  if (day !== null) {
    const d = utc(y, month, day);
    if (d.getUTCMonth() !== month) return null;
    return { at: d, precision: 'day' };
  }
  return { at: utc(y, month), precision: 'month' };
}

function ago(n: number, unit: string, ref: Date, dir: -1 | 1): EventTime {
  const u = unit.replace(/s$/, '');
  if (u === 'day') return { at: new Date(dayOf(ref).getTime() + dir * n * DAY), precision: 'day' };
  if (u === 'week') return { at: new Date(weekOf(ref).getTime() + dir * n * 7 * DAY), precision: 'week' };
  if (u === 'month') return { at: monthOf(ref, dir * n), precision: 'month' };
  return { at: yearOf(ref, dir * n), precision: 'year' };
}

const RULES: Rule[] = [
  // ISO dates: 2025-02-14, 2025-02-14T10:00:00Z, 2025-02
  {
    re: /\b(\d{4})-(\d{2})(?:-(\d{2})(T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?)?\b/,
    resolve: (m) => {
      if (m[4]) {
        const d = valid(new Date(`${m[1]}-${m[2]}-${m[3]}${m[4]}`));
        return d ? { at: d, precision: 'instant' } : null;
      }
      return monthDay(Number(m[2]) - 1, m[3] ? Number(m[3]) : null, Number(m[1]), new Date(8.64e15));
    },
  },
  // 3 March 2025, 3rd of March, 3 March
  {
    re: new RegExp(`\\b${ORD}(?: of)? ${MONTH_RE}(?:,? (\\d{4}))?\\b`, 'i'),
    resolve: (m, ref) => monthDay(monthIndex(m[2]!), Number(m[1]), m[3] ? Number(m[3]) : null, ref),
  },
  // March 3, March 3rd 2025, March 2025, in March
  {
    re: new RegExp(`\\b${MONTH_RE}(?: ${ORD}(?!\\d))?(?:,? (\\d{4}))?\\b`, 'i'),
    resolve: (m, ref) => {
      const word = m[1]!;
      // A bare month word ("may", "march", "jan") is a verb or a name more often than a month: without a day
      // or a year it counts only when capitalised in full or after a word that introduces a time.
      const bare = !m[2] && !m[3];
      const before = m.input.slice(Math.max(0, m.index - 12), m.index);
      const introduced = /\b(in|of|since|during|early|late|mid|until|by|last|next|this)[\s-]+$/i.test(before);
      if (bare && !introduced && !(word.length > 3 && /^[A-Z]/.test(word) && !/^May$/.test(word)))
        return null;
      return monthDay(monthIndex(word), m[2] ? Number(m[2]) : null, m[3] ? Number(m[3]) : null, ref);
    },
  },
  { re: /\b(the day before yesterday)\b/i, resolve: (_m, ref) => ago(2, 'day', ref, -1) },
  { re: /\b(yesterday|last night)\b/i, resolve: (_m, ref) => ago(1, 'day', ref, -1) },
  {
    re: /\b(today|tonight|this (?:morning|afternoon|evening))\b/i,
    resolve: (_m, ref) => ago(0, 'day', ref, -1),
  },
  { re: /\b(tomorrow)\b/i, resolve: (_m, ref) => ago(1, 'day', ref, 1) },
  {
    re: new RegExp(`\\b${NUM_RE} (day|week|month|year)s? ago\\b`, 'i'),
    resolve: (m, ref) => ago(NUMBER_WORDS[m[1]!.toLowerCase()] ?? Number(m[1]), m[2]!.toLowerCase(), ref, -1),
  },
  {
    re: new RegExp(`\\bin ${NUM_RE} (day|week|month|year)s?\\b`, 'i'),
    resolve: (m, ref) => ago(NUMBER_WORDS[m[1]!.toLowerCase()] ?? Number(m[1]), m[2]!.toLowerCase(), ref, 1),
  },
  {
    re: /\b(last|this|next|past|previous|coming) (week|month|year)\b/i,
    resolve: (m, ref) => {
      const w = m[1]!.toLowerCase();
      const n = w === 'this' ? 0 : 1;
      return ago(n, m[2]!.toLowerCase(), ref, w === 'next' || w === 'coming' ? 1 : -1);
    },
  },
  {
    re: /\b(last|this|next|on) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i,
    resolve: (m, ref) => {
      const target = WEEKDAYS.indexOf(m[2]!.toLowerCase());
      const today = ref.getUTCDay();
      const w = m[1]!.toLowerCase();
      // "on Friday" in a chat mostly tells of the past one; "next" is the coming one.
      if (w === 'this')
        return { at: new Date(weekOf(ref).getTime() + ((target + 6) % 7) * DAY), precision: 'day' };
      const delta = w === 'next' ? (target - today + 7) % 7 || 7 : -((today - target + 7) % 7 || 7);
      return { at: new Date(dayOf(ref).getTime() + delta * DAY), precision: 'day' };
    },
  },
  // in 2024, since 2019
  {
    re: /\b(?:in|since|during|of) ((?:19|20)\d{2})\b/i,
    resolve: (m) => ({ at: utc(Number(m[1]), 0), precision: 'year' }),
  },
];

/**
 * The first time expression in `text` (by position), resolved against `ref`; null when there is none.
 * "last month" said on 2026-03-10 → 2026-02-01, precision month.
 */
export function resolveEventTime(text: string, ref: Date): EventTime | null {
  let best: { index: number; t: EventTime } | null = null;
  for (const rule of RULES) {
    const m = rule.re.exec(text);
    if (!m || (best && m.index >= best.index)) continue;
    const t = rule.resolve(m, ref);
    if (t) best = { index: m.index, t };
  }
  return best?.t ?? null;
}

/** The end (exclusive) of the period an event time stands for. */
export function eventEnd(t: EventTime): Date {
  const a = t.at;
  switch (t.precision) {
    case 'day':
      return new Date(a.getTime() + DAY);
    case 'week':
      return new Date(a.getTime() + 7 * DAY);
    case 'month':
      return monthOf(a, 1);
    case 'year':
      return yearOf(a, 1);
    default:
      return new Date(a.getTime() + 1);
  }
}

/**
 * A memory's event time: the one told (`eventAt`, else `metadata.eventAt`), else the first the text names,
 * resolved against when it was said (`referenceTime`, else `now`), else the time it was said if the client
 * gave one (a chat turn speaks of its own moment), else null.
 */
export function eventTimeOf(
  i: { content: string; eventAt?: string; referenceTime?: string; metadata?: Record<string, unknown> },
  now: Date,
): EventTime | null {
  const told = i.eventAt ?? (typeof i.metadata?.eventAt === 'string' ? i.metadata.eventAt : undefined);
  if (told) {
    const iso = /^\d{4}-\d{2}(-\d{2})?/.test(told.trim()) ? resolveEventTime(told, now) : null;
    const d = new Date(told);
    if (iso) return iso;
    if (!Number.isNaN(d.getTime())) return { at: d, precision: 'instant' };
  }
  const ref = i.referenceTime ? new Date(i.referenceTime) : now;
  return resolveEventTime(i.content, ref) ?? (i.referenceTime ? { at: ref, precision: 'instant' } : null);
}
