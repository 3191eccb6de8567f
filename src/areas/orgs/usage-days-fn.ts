import { z } from 'zod';
import type { ErrorCode } from '../../core/errors.ts';
import { countsByDay, lastDays, usageDaysInput } from '../../core/usage-days.ts';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser } from './access.ts';
import { slugInput } from './schema.ts';

// One shape for every area's usage-by-day function (the dashboard's charts, issue 39): a member of the
// organization asks for the last `days` UTC days and gets one entry per day with the area's counters, zeros
// included. Each area brings only its query. It lives here, not in src/core/usage-days.ts, because it needs
// the function kit and the organization look-up, which core may not import (.dependency-cruiser.cjs).

type DayShape<K extends string> = { day: z.ZodString } & Record<K, z.ZodNumber>;

export function usageDaysFn<const N extends string, const K extends string>(spec: {
  name: N;
  summary: string;
  /** The counters, in the order the output lists them; the query selects each under its own name. */
  counters: readonly K[];
  /** Counters that are not whole numbers (credits); the rest are integers. */
  fractional?: readonly K[];
  /** Selects `day` (`YYYY-MM-DD`) and the counters, given `$1` = organization id and `$2` = the first day. */
  sql: string;
  errors?: readonly ErrorCode[];
  /** Runs after the organization check, before the query (a flush, a feature check). */
  before?: (deps: Deps) => void | Promise<void>;
}) {
  const shape = { day: z.string() } as DayShape<K>;
  for (const k of spec.counters)
    (shape as Record<string, z.ZodType>)[k] = spec.fractional?.includes(k) ? z.number() : z.number().int();
  const output = z.object({ days: z.array(z.object(shape)) });
  return defineFn({
    name: spec.name,
    summary: spec.summary,
    auth: { kind: 'user' },
    input: z.strictObject({ orgSlug: slugInput, days: usageDaysInput }),
    output,
    errors: ['ORG_NOT_FOUND', ...(spec.errors ?? [])],
    handler: async ({ deps, caller }, input) => {
      const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
      await spec.before?.(deps);
      const days = await countsByDay(
        deps.db,
        spec.sql,
        org.id,
        lastDays(deps.clock.now(), input.days),
        spec.counters,
      );
      return { days } as z.infer<typeof output>;
    },
  });
}
