import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Usage } from '../../core/ai/models.ts';
import type { Environment } from '../../core/auth/caller.ts';
import type { Deps } from '../../deps.ts';
import { modelUsage } from './tables.ts';

// Token usage through the model proxy, counted per organization, environment, model and UTC day.

type UsageInput = { orgId: string; environment: Environment; model: string; usage: Usage };

export async function recordModelUsage(deps: Deps, input: UsageInput, requests = 1): Promise<void> {
  const day = deps.clock.now().toISOString().slice(0, 10);
  const u = input.usage;
  await deps.db.orm
    .insert(modelUsage)
    .values({
      orgId: input.orgId,
      environment: input.environment,
      model: input.model,
      day,
      requests,
      promptTokens: u.promptTokens,
      completionTokens: u.completionTokens,
      totalTokens: u.totalTokens,
    })
    .onConflictDoUpdate({
      target: [modelUsage.orgId, modelUsage.environment, modelUsage.model, modelUsage.day],
      set: {
        requests: sql`${modelUsage.requests} + ${requests}`,
        promptTokens: sql`${modelUsage.promptTokens} + ${u.promptTokens}`,
        completionTokens: sql`${modelUsage.completionTokens} + ${u.completionTokens}`,
        totalTokens: sql`${modelUsage.totalTokens} + ${u.totalTokens}`,
      },
    });
}

/**
 * Sums usage in memory and writes it at most every `delayMs` (one upsert per organization, environment and
 * model), so a busy proxy does not write a row per request. flush() on shutdown writes what is left.
 */
export class UsageBuffer {
  readonly #deps: Deps;
  readonly #delayMs: number;
  #pending = new Map<string, { input: UsageInput; requests: number }>();
  #timer: NodeJS.Timeout | null = null;

  constructor(deps: Deps, delayMs = 200) {
    this.#deps = deps;
    this.#delayMs = delayMs;
  }

  add(input: UsageInput): void {
    const k = `${input.orgId}|${input.environment}|${input.model}`;
    const cur = this.#pending.get(k);
    if (cur) {
      cur.requests += 1;
      cur.input.usage.promptTokens += input.usage.promptTokens;
      cur.input.usage.completionTokens += input.usage.completionTokens;
      cur.input.usage.totalTokens += input.usage.totalTokens;
    } else this.#pending.set(k, { input: { ...input, usage: { ...input.usage } }, requests: 1 });
    this.#timer ??= setTimeout(() => void this.flush(), this.#delayMs);
  }

  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    for (const { input, requests } of batch) {
      await recordModelUsage(this.#deps, input, requests).catch((err) =>
        this.#deps.log.error({ err, orgId: input.orgId }, 'recording model usage failed'),
      );
    }
  }
}

export const usageRow = z.object({
  day: z.string(),
  environment: z.string(),
  model: z.string(),
  requests: z.number(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
});
