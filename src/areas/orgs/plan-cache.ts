import { eq } from 'drizzle-orm';
import type { Db } from '../../core/db/client.ts';
import type { Plan } from './tables.ts';
import { orgs } from './tables.ts';

const FRESH_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * Organization → plan, per process, for decisions on the request path (the v1 rate limit): only an
 * organization's first request here waits for the database. Past FRESH_MS the plan still answers while one
 * read refreshes it in the background, so a plan change reaches every node within about a minute and no
 * request waits for it.
 */
export class OrgPlanCache {
  readonly #db: Db;
  readonly #plans = new Map<string, { plan: Plan; at: number }>();
  readonly #loading = new Map<string, Promise<Plan>>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** The plan when known here (a stale one starts a refresh); undefined: call load. */
  known(orgId: string, nowMs: number): Plan | undefined {
    const hit = this.#plans.get(orgId);
    if (!hit) return undefined;
    if (nowMs - hit.at > FRESH_MS && !this.#loading.has(orgId)) void this.load(orgId, nowMs).catch(() => {});
    return hit.plan;
  }

  load(orgId: string, nowMs: number): Promise<Plan> {
    let p = this.#loading.get(orgId);
    if (p) return p;
    p = (async () => {
      const [row] = await this.#db.orm.select({ plan: orgs.plan }).from(orgs).where(eq(orgs.id, orgId));
      // A deleted organization's keys are refused by authentication; 'free' only keeps this total.
      const plan = row?.plan ?? 'free';
      if (this.#plans.size >= MAX_ENTRIES) this.#plans.clear();
      this.#plans.set(orgId, { plan, at: nowMs });
      return plan;
    })().finally(() => this.#loading.delete(orgId));
    this.#loading.set(orgId, p);
    return p;
  }
}
