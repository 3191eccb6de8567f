// Times anchored on another event ("the week after the adoption meeting", "two days before the launch"):
// the anchor is itself a memory, so its time is the event time of the memory that best matches the
// anchor's words (one keyword recall, in the same scope and filters), and the period is counted from it.
// Only the phrasing "<span> after|before <anchor>" is recognised (decision 141); anything else is left to
// time-expressions.ts or to the text.

import type { MemoryContext, Scope } from './context.ts';
import type { RecallInput } from './schema.ts';
import { NUMBER_WORDS } from './time-expressions.ts';

const DAY = 86_400_000;
const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 };

export type Anchor = {
  /** The words that name the anchoring event ("the adoption meeting"). */
  anchor: string;
  direction: 'after' | 'before';
  /** "the week after": the whole span next to the anchor; "two days after": the one day that far away. */
  span: 'whole' | 'point';
  days: number;
  /** Days in the unit named (1 for days, 7 for weeks…). */
  unitDays: number;
};

const RE =
  /\b(?:(the)\s+(day|week|month|year)|(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|month|year)s?)\s+(after|before)\s+((?:[^\s?.!,;]+\s*){1,8})/i;

/** The first anchored time expression of a query, or null. */
export function parseAnchor(query: string): Anchor | null {
  const m = RE.exec(query);
  if (!m) return null;
  const anchor = m[6]!.trim();
  if (!anchor) return null;
  const unit = (m[2] ?? m[4])!.toLowerCase();
  const n = m[1] ? 1 : /^\d+$/.test(m[3]!) ? Number(m[3]) : NUMBER_WORDS[m[3]!.toLowerCase()]!;
  return {
    anchor,
    direction: m[5]!.toLowerCase() as 'after' | 'before',
    span: m[1] ? 'whole' : 'point',
    days: n * UNIT_DAYS[unit]!,
    unitDays: UNIT_DAYS[unit]!,
  };
}

/**
 * The period [from, to) an anchor names, given the anchoring event's time (its day counts as a whole day).
 * "the week after" an event on the 10th: the 11th to the 18th; "two days before" it: the 8th.
 */
export function anchoredPeriod(a: Anchor, at: Date): { from: Date; to: Date } {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  const sign = a.direction === 'after' ? 1 : -1;
  if (a.span === 'whole')
    return a.direction === 'after'
      ? { from: new Date(day + DAY), to: new Date(day + DAY + a.days * DAY) }
      : { from: new Date(day - a.days * DAY), to: new Date(day) };
  const point = day + sign * a.days * DAY;
  // "two days before" is that day; "two weeks after" is about that week, not one day: the week around it.
  return a.unitDays === 1
    ? { from: new Date(point), to: new Date(point + DAY) }
    : { from: new Date(point - 3 * DAY), to: new Date(point + 4 * DAY) };
}

type RecallFn = (
  ctx: MemoryContext,
  s: Scope,
  input: RecallInput,
  opts: { countAccess?: boolean },
) => Promise<{ memories: { eventAt: string | null; createdAt: string }[] }>;

/**
 * recall's time boost for an anchored query: the anchor's time is that of the memory its words find first
 * (a keyword recall under the same filters), and memories of the period counted from it get the boost.
 * Costs one more recall, only for a query so phrased. `recall` is passed in (recall.ts imports this file).
 */
export async function anchoredBoost(
  recall: RecallFn,
  ctx: MemoryContext,
  s: Scope,
  input: RecallInput,
  weights: [number, number],
  boost = 1,
): Promise<{ from: string; to: string; weight: number } | null> {
  if (input.timeBoost === false || input.eventFrom || input.eventTo) return null;
  const a = parseAnchor(input.query);
  if (!a) return null;
  const found = await recall(
    ctx,
    s,
    { ...input, query: a.anchor, mode: 'keyword', limit: 1, timeBoost: false, threshold: 0 },
    { countAccess: false },
  );
  const m = found.memories[0];
  if (!m) return null;
  const p = anchoredPeriod(a, new Date(m.eventAt ?? m.createdAt));
  return { from: p.from.toISOString(), to: p.to.toISOString(), weight: boost * Math.max(...weights) };
}
