import jsonata from 'jsonata';
import { z } from 'zod';
import { EVENT_NAME_RE } from '../triggers/config.ts';

// The `wait` step type (added to the contract's nine: docs/workflows.md, "Waits"): sleep for a duration or
// until a time, wait for an event matching an expression, or wait for a person's approval — each with an
// optional timeout. Exactly one of duration, until, event or approval.

const DURATION_RE = /^(\d{1,7})(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };
export const MAX_WAIT_MS = 366 * 86_400_000;

/** `90s`, `15m`, `2h`, `7d`, `500ms`, or a number of milliseconds. */
export const duration = z.union([z.number().int().min(0).max(MAX_WAIT_MS), z.string().max(20)]);

export const waitDef = z.object({
  duration: duration.optional(),
  /** An ISO 8601 time, or a `{{…}}` template that gives one. */
  until: z.string().max(2000).optional(),
  event: z.string().max(200).optional(),
  /** JSONata over `{ event: { name, payload }, variables, steps }`; the first event it is truthy for resumes. */
  match: z.string().max(5000).optional(),
  approval: z.object({ message: z.string().max(2000).optional() }).optional(),
  timeout: duration.optional(),
  /** On timeout: fail the step (default), or complete it with `{ timedOut: true }`. */
  onTimeout: z.enum(['fail', 'continue']).optional(),
});
export type WaitDef = z.infer<typeof waitDef>;

export function durationMs(d: number | string): number | null {
  if (typeof d === 'number') return d;
  const m = DURATION_RE.exec(d.trim());
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms <= MAX_WAIT_MS ? ms : null;
}

export function waitKindOf(w: WaitDef): 'sleep' | 'event' | 'approval' {
  if (w.event !== undefined) return 'event';
  if (w.approval !== undefined) return 'approval';
  return 'sleep';
}

/** The problems of a wait step's `wait` (empty when it is valid). */
export function waitProblems(at: string, w: WaitDef | undefined): string[] {
  if (!w) return [`${at}: type wait needs 'wait' (one of duration, until, event, approval).`];
  const problems: string[] = [];
  const given = (['duration', 'until', 'event', 'approval'] as const).filter((k) => w[k] !== undefined);
  if (given.length !== 1)
    problems.push(
      `${at}.wait: give exactly one of duration, until, event, approval (got ${given.join(', ') || 'none'}).`,
    );
  const bad = (field: string, d: number | string | undefined) => {
    if (d !== undefined && durationMs(d) === null)
      problems.push(`${at}.wait.${field}: '${d}' is not a duration (e.g. 90s, 15m, 2h, 7d; at most 366d).`);
  };
  bad('duration', w.duration);
  bad('timeout', w.timeout);
  if (w.until !== undefined && !w.until.includes('{{') && Number.isNaN(Date.parse(w.until)))
    problems.push(`${at}.wait.until: '${w.until}' is not an ISO 8601 time (or a {{…}} template).`);
  if (w.event !== undefined && !EVENT_NAME_RE.test(w.event))
    problems.push(`${at}.wait.event: '${w.event}' is not an event name (letters, digits and . _ : / -).`);
  if (w.match !== undefined) {
    if (w.event === undefined) problems.push(`${at}.wait.match: belongs to a wait for an event.`);
    try {
      jsonata(w.match);
    } catch (err) {
      problems.push(`${at}.wait.match: not a valid JSONata expression (${(err as Error).message}).`);
    }
  }
  if (
    (w.timeout !== undefined || w.onTimeout !== undefined) &&
    w.event === undefined &&
    w.approval === undefined
  )
    problems.push(
      `${at}.wait.timeout: a sleep has no timeout; timeouts belong to waits for an event or approval.`,
    );
  return problems;
}
