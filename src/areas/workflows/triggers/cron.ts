// Five-field cron expressions (minute hour day-of-month month day-of-week) evaluated in an IANA time zone.
// Slots are searched in the zone's wall-clock time and then turned into instants, so `0 9 * * *` in
// Europe/Oslo is 09:00 there in summer and in winter. A wall time that a DST change skips runs at the
// instant the clock jumps to; one it repeats runs once, at its first occurrence. Same syntax as Vixie cron:
// `*`, lists, ranges, steps, month and day names, `7` for Sunday, and when both day fields are restricted a
// day matching either one matches (docs/workflows.md, "Triggers").

export type Cron = {
  minute: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  month: Set<number>;
  dow: Set<number>;
  domAny: boolean;
  dowAny: boolean;
};

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

type FieldSpec = { name: string; min: number; max: number; names?: string[]; namesFrom?: number };
const FIELDS: FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, namesFrom: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, namesFrom: 0 },
];

export class CronError extends Error {}

function value(text: string, f: FieldSpec): number {
  const i = f.names?.indexOf(text.toUpperCase()) ?? -1;
  if (i >= 0) return i + (f.namesFrom ?? 0);
  if (!/^\d{1,2}$/.test(text)) throw new CronError(`'${text}' is not a valid ${f.name}.`);
  const n = Number(text);
  if (n < f.min || n > f.max) throw new CronError(`${f.name} ${n} is outside ${f.min}-${f.max}.`);
  return n;
}

function field(text: string, f: FieldSpec): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText, extra] = part.split('/');
    if (extra !== undefined || range === undefined || range === '')
      throw new CronError(`'${part}' is not a valid ${f.name}.`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || (stepText !== undefined && !/^\d+$/.test(stepText)))
      throw new CronError(`'${part}': the step must be a positive whole number.`);
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [f.min, f.max];
    else if (range.includes('-')) {
      const [a, b, more] = range.split('-');
      if (more !== undefined || !a || !b) throw new CronError(`'${part}' is not a valid ${f.name}.`);
      [lo, hi] = [value(a, f), value(b, f)];
      if (lo > hi) throw new CronError(`'${part}': a range runs from low to high.`);
    } else {
      lo = value(range, f);
      hi = stepText === undefined ? lo : f.max;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

export function parseCron(expr: string): Cron {
  const text = MACROS[expr.trim().toLowerCase()] ?? expr.trim();
  const parts = text.split(/\s+/);
  if (parts.length !== 5)
    throw new CronError(
      `'${expr}' has ${parts.length} field(s); a cron expression has 5 (minute hour day-of-month month day-of-week).`,
    );
  const [minute, hour, dom, month, dow] = parts.map((p, i) => field(p, FIELDS[i]!));
  if (dow!.has(7)) dow!.add(0);
  return {
    minute: minute!,
    hour: hour!,
    dom: dom!,
    month: month!,
    dow: dow!,
    domAny: parts[2] === '*',
    dowAny: parts[4] === '*',
  };
}

/** Throws a RangeError naming the zone when it is not an IANA time zone this runtime knows. */
export function checkTimeZone(tz: string): void {
  formatter(tz);
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The zone's wall-clock time of an instant, as a "naive" epoch (its fields read with getUTC*). */
function wallOf(ms: number, tz: string): number {
  const p: Record<string, number> = {};
  for (const x of formatter(tz).formatToParts(new Date(ms)))
    if (x.type !== 'literal') p[x.type] = Number(x.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!);
}

/** The first instant whose wall time in the zone is `wall` (or the instant a DST gap jumps to). */
function instantOf(wall: number, tz: string): number {
  const first = wall - (wallOf(wall, tz) - wall);
  const offset = wallOf(first, tz) - first;
  const at = wall - offset;
  // Ambiguous (the clock went back): the earlier instant is the hour before, if it has the same wall time.
  const earlier = at - 3600_000;
  return wallOf(earlier, tz) === wall ? earlier : at;
}

function dayMatches(c: Cron, d: Date): boolean {
  const dom = c.dom.has(d.getUTCDate());
  const dow = c.dow.has(d.getUTCDay());
  if (c.domAny || c.dowAny) return (c.domAny || dom) && (c.dowAny || dow);
  return dom || dow;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const HORIZON = 5 * 366 * DAY;

/** The wall time of the next matching minute at or after `wall` (forward) or at or before it (backward). */
function search(c: Cron, wall: number, forward: boolean): number | null {
  const limit = forward ? wall + HORIZON : wall - HORIZON;
  let t = wall - (wall % MINUTE);
  while (forward ? t <= limit : t >= limit) {
    const d = new Date(t);
    if (!c.month.has(d.getUTCMonth() + 1)) {
      t = forward
        ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
        : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) - MINUTE;
    } else if (!dayMatches(c, d)) {
      const start = t - (t % DAY);
      t = forward ? start + DAY : start - MINUTE;
    } else if (!c.hour.has(d.getUTCHours())) {
      const start = t - (t % HOUR);
      t = forward ? start + HOUR : start - MINUTE;
    } else if (!c.minute.has(d.getUTCMinutes())) t += forward ? MINUTE : -MINUTE;
    else return t;
  }
  return null;
}

/** The first slot strictly after `after`, or null when none comes within five years. */
export function nextSlot(c: Cron, tz: string, after: Date): Date | null {
  let wall = wallOf(after.getTime(), tz) + MINUTE;
  for (let i = 0; i < 4; i++) {
    const w = search(c, wall, true);
    if (w === null) return null;
    const at = instantOf(w, tz);
    if (at > after.getTime()) return new Date(at);
    wall = w + MINUTE;
  }
  return null;
}

/** The latest slot at or before `at`, or null when none was within five years. */
export function lastSlot(c: Cron, tz: string, at: Date): Date | null {
  let wall = wallOf(at.getTime(), tz);
  for (let i = 0; i < 4; i++) {
    const w = search(c, wall, false);
    if (w === null) return null;
    const inst = instantOf(w, tz);
    if (inst <= at.getTime()) return new Date(inst);
    wall = w - MINUTE;
  }
  return null;
}
