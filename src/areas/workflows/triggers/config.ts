import jsonata from 'jsonata';
import { z } from 'zod';
import { CronError, checkTimeZone, nextSlot, parseCron } from './cron.ts';

// A workflow's triggers (schedules, events, inbound webhook) and limits (concurrency key, start rate), as
// given on create and update, and the checks that list every problem of them with the definition's own.

export const EVENT_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/;
export const eventName = z.string().regex(EVENT_NAME_RE, 'letters, digits and . _ : / -, at most 200');

export const scheduleTrigger = z.object({
  cron: z.string().min(1).max(200),
  /** IANA zone the cron reads wall-clock time in (default UTC). */
  timezone: z.string().min(1).max(100).optional(),
  /** When the previous run of this schedule is still going: skip the slot (default), run anyway, or queue. */
  overlap: z.enum(['skip', 'allow', 'queue']).optional(),
  /** After downtime, run the latest missed slot once (default true); false drops missed slots. */
  catchUp: z.boolean().optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
});
export const eventTrigger = z.object({
  name: eventName,
  /** JSONata over `{ name, payload }`; the workflow starts only when it is truthy. */
  filter: z.string().max(5000).optional(),
  /** JSONata over `{ name, payload }` giving the run's variables (default: the payload's own keys). */
  input: z.string().max(5000).optional(),
});
export const triggersDef = z.object({
  schedules: z.array(scheduleTrigger).max(10).optional(),
  events: z.array(eventTrigger).max(20).optional(),
  webhook: z
    .object({
      enabled: z.boolean(),
      /** JSONata over `{ payload, headers }` giving the run's variables (default: the body's own keys). */
      input: z.string().max(5000).optional(),
    })
    .optional(),
});
export type Triggers = z.infer<typeof triggersDef>;
export type ScheduleTrigger = z.infer<typeof scheduleTrigger>;

export const limitsDef = z.object({
  /** At most `limit` runs (default 1) at once per value of `key` (JSONata over `{ variables }`). */
  concurrency: z
    .object({ key: z.string().max(2000).optional(), limit: z.number().int().min(1).max(1000).optional() })
    .optional(),
  /** At most `limit` starts per `periodSeconds`; starts beyond it are refused (429) or not made. */
  rateLimit: z
    .object({
      limit: z.number().int().min(1).max(100_000),
      periodSeconds: z.number().int().min(1).max(86_400),
    })
    .optional(),
});
export type Limits = z.infer<typeof limitsDef>;

export type RunTrigger = {
  type: 'api' | 'schedule' | 'event' | 'webhook';
  ref?: string;
  slot?: string;
  eventId?: string;
};

export const scheduleRef = (s: ScheduleTrigger) => `${s.cron.trim()}@${s.timezone ?? 'UTC'}`;

function expressionProblem(at: string, expr: string | undefined, problems: string[]): void {
  if (expr === undefined) return;
  try {
    jsonata(expr);
  } catch (err) {
    problems.push(`${at}: not a valid JSONata expression (${(err as Error).message}).`);
  }
}

/** Every problem of the triggers and limits, named by where it is (`triggers.schedules[0].cron: …`). */
export function triggerProblems(t: Triggers, l: Limits, now: Date): string[] {
  const problems: string[] = [];
  const refs = new Set<string>();
  for (const [i, s] of (t.schedules ?? []).entries()) {
    const at = `triggers.schedules[${i}]`;
    let zoneOk = true;
    try {
      checkTimeZone(s.timezone ?? 'UTC');
    } catch {
      zoneOk = false;
      problems.push(`${at}.timezone: '${s.timezone}' is not an IANA time zone (e.g. Europe/Oslo).`);
    }
    try {
      const cron = parseCron(s.cron);
      if (zoneOk && !nextSlot(cron, s.timezone ?? 'UTC', now))
        problems.push(`${at}.cron: '${s.cron}' never fires.`);
    } catch (err) {
      if (!(err instanceof CronError)) throw err;
      problems.push(`${at}.cron: ${err.message}`);
    }
    if (refs.has(scheduleRef(s))) problems.push(`${at}: the same schedule is listed twice.`);
    refs.add(scheduleRef(s));
  }
  for (const [i, e] of (t.events ?? []).entries()) {
    expressionProblem(`triggers.events[${i}].filter`, e.filter, problems);
    expressionProblem(`triggers.events[${i}].input`, e.input, problems);
  }
  expressionProblem('triggers.webhook.input', t.webhook?.input, problems);
  expressionProblem('limits.concurrency.key', l.concurrency?.key, problems);
  return problems;
}
