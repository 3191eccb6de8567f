import { z } from 'zod';
import type { Db } from './db/client.ts';

// Usage over time for the dashboard's charts (issue 39): counts per UTC day over the last N days, computed
// from the tables each area already keeps (no rollup table: an organization's rows of 90 days are few, and
// every query below uses the tables' (org_id, …, created_at) indexes).

export const usageDaysInput = z.number().int().min(1).max(90).default(30);

/** The last `n` UTC days, oldest first, ending today, and the instant the first one starts. */
export function lastDays(now: Date, n: number): { days: string[]; since: Date } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const days: string[] = [];
  for (let i = n - 1; i >= 0; i--) days.push(new Date(today - i * 86_400_000).toISOString().slice(0, 10));
  return { days, since: new Date(today - (n - 1) * 86_400_000) };
}

/**
 * Runs `sql` (which must select `day` as `YYYY-MM-DD` and numeric columns `keys`, given `$1` = org id and
 * `$2` = since) and answers one entry per day, zero where the query had no row.
 */
export async function countsByDay<K extends string>(
  db: Db,
  sql: string,
  orgId: string,
  range: { days: string[]; since: Date },
  keys: readonly K[],
): Promise<Array<{ day: string } & Record<K, number>>> {
  const { rows } = await db.query<Record<string, string | number>>(sql, [orgId, range.since.toISOString()]);
  const byDay = new Map(rows.map((r) => [String(r.day), r]));
  return range.days.map((day) => {
    const r = byDay.get(day);
    const out = { day } as { day: string } & Record<K, number>;
    for (const k of keys) (out as Record<string, number | string>)[k] = Number(r?.[k] ?? 0);
    return out;
  });
}

/** `to_char` of a timestamptz column as its UTC day. */
export const utcDay = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD')`;
