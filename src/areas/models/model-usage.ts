import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Usage } from '../../core/ai/models.ts';
import type { Environment } from '../../core/auth/caller.ts';
import type { Deps } from '../../deps.ts';
import { SpendCache } from './month-spend.ts';
import { PriceList } from './prices.ts';
import { modelUsage } from './tables.ts';

// Token usage and cost through the model proxy, counted per organization, environment, API key, model and
// UTC day. Any proxy operation (chat completions, embeddings, responses) records through UsageBuffer.add.

/** One call's usage. `model` is `provider/model`; `keyId` the API key's ('' when there is none). */
export type UsageInput = {
  orgId: string;
  environment: Environment;
  keyId?: string;
  model: string;
  usage: Usage;
  /** USD, priced by the caller (UsageBuffer does it); null or absent: the model has no price. */
  costUsd?: number | null;
  /** The UTC day of the call (default: today when written). */
  day?: string;
};

export async function recordModelUsage(deps: Deps, input: UsageInput, requests = 1): Promise<void> {
  const day = input.day ?? deps.clock.now().toISOString().slice(0, 10);
  const u = input.usage;
  const cost = input.costUsd ?? null;
  await deps.db.orm
    .insert(modelUsage)
    .values({
      orgId: input.orgId,
      environment: input.environment,
      keyId: input.keyId ?? '',
      model: input.model,
      day,
      requests,
      promptTokens: u.promptTokens,
      completionTokens: u.completionTokens,
      totalTokens: u.totalTokens,
      costUsd: cost,
    })
    .onConflictDoUpdate({
      target: [modelUsage.orgId, modelUsage.environment, modelUsage.keyId, modelUsage.model, modelUsage.day],
      set: {
        requests: sql`${modelUsage.requests} + ${requests}`,
        promptTokens: sql`${modelUsage.promptTokens} + ${u.promptTokens}`,
        completionTokens: sql`${modelUsage.completionTokens} + ${u.completionTokens}`,
        totalTokens: sql`${modelUsage.totalTokens} + ${u.totalTokens}`,
        // An unpriced call leaves the cost as it was; a priced one adds to it (null counts as 0).
        ...(cost === null
          ? {}
          : { costUsd: sql`coalesce(${modelUsage.costUsd}, 0) + ${cost}::double precision` }),
      },
    });
}

/**
 * A model call Pier makes on an organization's behalf (memory inference on add), counted as the proxy counts
 * its calls: the same row per organization, environment, key, model and day, priced with the same list. It
 * is written at once rather than buffered: such calls are few and each takes seconds, and the proxy's buffer
 * lives in its plugin.
 */
export async function recordOwnModelCall(
  deps: Deps,
  input: Omit<UsageInput, 'costUsd' | 'day'>,
): Promise<void> {
  const costUsd = new PriceList(deps.config.models.prices).costOf(input.model, input.usage);
  await recordModelUsage(deps, { ...input, costUsd });
}

/**
 * Sums usage in memory and writes it at most every `delayMs` (one upsert per organization, environment, key
 * and model), so a busy proxy does not write a row per request. flush() on shutdown writes what is left.
 * Each call is priced when added; pendingCost() lets the budget check count what is not written yet.
 */
export class UsageBuffer {
  readonly #deps: Deps;
  readonly #prices: PriceList;
  readonly #delayMs: number;
  #pending = new Map<string, { input: UsageInput; requests: number }>();
  /** Taken from #pending by a flush and not yet written: still counted by pendingCost(). */
  #writing: { input: UsageInput; requests: number }[] = [];
  #timer: NodeJS.Timeout | null = null;
  /** The written part of this month's spend, for the budget check; forgotten here after each write. */
  readonly spend: SpendCache;

  constructor(deps: Deps, prices: PriceList, delayMs = 200) {
    this.#deps = deps;
    this.spend = new SpendCache(deps);
    this.#prices = prices;
    this.#delayMs = delayMs;
  }

  add(input: UsageInput): void {
    const cost = this.#prices.costOf(input.model, input.usage);
    const day = this.#deps.clock.now().toISOString().slice(0, 10);
    const k = `${input.orgId}|${input.environment}|${input.keyId ?? ''}|${input.model}|${day}`;
    const cur = this.#pending.get(k);
    if (cur) {
      cur.requests += 1;
      cur.input.usage.promptTokens += input.usage.promptTokens;
      cur.input.usage.completionTokens += input.usage.completionTokens;
      cur.input.usage.totalTokens += input.usage.totalTokens;
      if (cost !== null) cur.input.costUsd = (cur.input.costUsd ?? 0) + cost;
    } else
      this.#pending.set(k, {
        input: { ...input, usage: { ...input.usage }, costUsd: cost, day },
        requests: 1,
      });
    this.#timer ??= setTimeout(() => void this.flush(), this.#delayMs);
  }

  /** USD added since `sinceDay` but not yet written: the organization's, and the key's. */
  pendingCost(orgId: string, keyId: string, sinceDay: string): { org: number; key: number } {
    let org = 0;
    let key = 0;
    for (const { input } of [...this.#pending.values(), ...this.#writing]) {
      if (input.orgId !== orgId || (input.day ?? '') < sinceDay) continue;
      org += input.costUsd ?? 0;
      if (input.keyId === keyId) key += input.costUsd ?? 0;
    }
    return { org, key };
  }

  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    this.#writing.push(...batch);
    for (const entry of batch) {
      await recordModelUsage(this.#deps, entry.input, entry.requests).catch((err) =>
        this.#deps.log.error({ err, orgId: entry.input.orgId }, 'recording model usage failed'),
      );
      this.spend.forget(entry.input.orgId);
      this.#writing.splice(this.#writing.indexOf(entry), 1);
    }
  }
}

export const usageRow = z.object({
  day: z.string(),
  environment: z.string(),
  keyId: z.string().describe("The API key's id ('' for usage recorded before keys were counted)"),
  model: z.string(),
  requests: z.number(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  costUsd: z.number().nullable().describe('USD at the prices of the day; null: the model has no price'),
});
