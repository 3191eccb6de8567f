import { and, eq, gte, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { modelUsage } from './tables.ts';

// This month's spend as the budget check reads it: the database's sum, kept briefly per (organization, key).

/** The first day (UTC) of the budget period, a calendar month, holding `now`. */
export const monthStart = (now: Date) => `${now.toISOString().slice(0, 7)}-01`;

export type Spend = { org: number; key: number };

/** USD spent this month, written to the database: the organization's and one key's. */
export async function monthSpend(deps: Deps, orgId: string, keyId: string): Promise<Spend> {
  const [row] = await deps.db.orm
    .select({
      org: sql<number>`coalesce(sum(${modelUsage.costUsd}), 0)::double precision`,
      key: sql<number>`coalesce(sum(${modelUsage.costUsd}) filter (where ${modelUsage.keyId} = ${keyId}), 0)::double precision`,
    })
    .from(modelUsage)
    .where(and(eq(modelUsage.orgId, orgId), gte(modelUsage.day, monthStart(deps.clock.now()))));
  return { org: Number(row?.org ?? 0), key: Number(row?.key ?? 0) };
}

const TTL_MS = 1_000;

/**
 * The written spend per (organization, key), read again after TTL_MS, or at once after this node wrote usage
 * of the organization (forget(), called by the usage buffer once a write is done). A read that started
 * before such a write is not kept, so this node's own spend is never missed; other nodes' spend shows
 * within TTL_MS of their write. Saves the sum's query on most calls of a key with a budget.
 */
export class SpendCache {
  readonly #deps: Deps;
  #entries = new Map<string, { at: number; month: string; gen: number; value: Promise<Spend> }>();
  #gens = new Map<string, number>();

  constructor(deps: Deps) {
    this.#deps = deps;
  }

  get(orgId: string, keyId: string): Promise<Spend> {
    const k = `${orgId}|${keyId}`;
    const now = Date.now();
    const month = monthStart(this.#deps.clock.now());
    const gen = this.#gens.get(orgId) ?? 0;
    const hit = this.#entries.get(k);
    if (hit && hit.gen === gen && hit.month === month && now - hit.at < TTL_MS) return hit.value;
    if (this.#entries.size > 10_000) this.#entries.clear();
    const value = monthSpend(this.#deps, orgId, keyId);
    this.#entries.set(k, { at: now, month, gen, value });
    value.catch(() => this.#entries.delete(k));
    return value;
  }

  forget(orgId: string): void {
    this.#gens.set(orgId, (this.#gens.get(orgId) ?? 0) + 1);
    if (this.#gens.size > 10_000) this.#gens.clear();
  }
}
