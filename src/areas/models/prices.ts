import type { ModelPrice } from '../../config-prices.ts';
import type { Usage } from '../../core/ai/models.ts';

/**
 * Built-in list prices, USD per 1M input / output tokens, by `provider/model` prefix (the longest matching
 * prefix wins, so `openai/gpt-4o-mini` beats `openai/gpt-4o`, and dated snapshots such as
 * `gpt-4o-mini-2024-07-18` take their family's price). Source: the vendors' public pricing pages
 * (openai.com/api/pricing, anthropic.com/pricing, ai.google.dev/gemini-api/docs/pricing,
 * mistral.ai/pricing) as published in 2025 — standard tier, text, no batch or cache discounts. The
 * machine that wrote this has no access to those pages, so they could not be re-checked on 2026-12-07:
 * operators override or extend them with MODEL_PRICES / MODEL_PRICES_FILE (docs/models.md, "Spend").
 * `pier/…` (the operator's own server) has no built-in price; the local embedder costs nothing.
 */
export const BUILT_IN_PRICES: Readonly<Record<string, ModelPrice>> = {
  'openai/gpt-5': { input: 1.25, output: 10 },
  'openai/gpt-5-mini': { input: 0.25, output: 2 },
  'openai/gpt-5-nano': { input: 0.05, output: 0.4 },
  'openai/gpt-4.1': { input: 2, output: 8 },
  'openai/gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'openai/gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'openai/gpt-4o': { input: 2.5, output: 10 },
  'openai/gpt-4o-mini': { input: 0.15, output: 0.6 },
  'openai/o1': { input: 15, output: 60 },
  'openai/o3': { input: 2, output: 8 },
  'openai/o3-mini': { input: 1.1, output: 4.4 },
  'openai/o4-mini': { input: 1.1, output: 4.4 },
  'openai/text-embedding-3-small': { input: 0.02, output: 0 },
  'openai/text-embedding-3-large': { input: 0.13, output: 0 },
  'openai/text-embedding-ada-002': { input: 0.1, output: 0 },
  'anthropic/claude-opus-4': { input: 15, output: 75 },
  'anthropic/claude-opus-4-5': { input: 5, output: 25 },
  'anthropic/claude-sonnet-4': { input: 3, output: 15 },
  'anthropic/claude-3-7-sonnet': { input: 3, output: 15 },
  'anthropic/claude-3-5-sonnet': { input: 3, output: 15 },
  'anthropic/claude-haiku-4-5': { input: 1, output: 5 },
  'anthropic/claude-3-5-haiku': { input: 0.8, output: 4 },
  'anthropic/claude-3-haiku': { input: 0.25, output: 1.25 },
  'google/gemini-2.5-pro': { input: 1.25, output: 10 },
  'google/gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'google/gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  'google/gemini-2.0-flash': { input: 0.1, output: 0.4 },
  'google/gemini-2.0-flash-lite': { input: 0.075, output: 0.3 },
  'google/gemini-embedding-001': { input: 0.15, output: 0 },
  'mistral/mistral-large': { input: 2, output: 6 },
  'mistral/mistral-medium': { input: 0.4, output: 2 },
  'mistral/mistral-small': { input: 0.1, output: 0.3 },
  'mistral/codestral': { input: 0.3, output: 0.9 },
  'mistral/ministral-8b': { input: 0.1, output: 0.1 },
  'mistral/ministral-3b': { input: 0.04, output: 0.04 },
  'mistral/pixtral-large': { input: 2, output: 6 },
  'mistral/magistral-medium': { input: 2, output: 5 },
  'mistral/magistral-small': { input: 0.5, output: 1.5 },
  'mistral/devstral-small': { input: 0.1, output: 0.3 },
  'mistral/mistral-embed': { input: 0.1, output: 0 },
  'pier-local/': { input: 0, output: 0 },
};

/** Finds a model's price: the operator's overrides and the built-in table, longest prefix first. */
export class PriceList {
  readonly #entries: [string, ModelPrice][];

  constructor(overrides: Record<string, ModelPrice> = {}) {
    const all = { ...BUILT_IN_PRICES, ...overrides };
    this.#entries = Object.entries(all).sort((a, b) => b[0].length - a[0].length);
  }

  /** `model` is `provider/model` as recorded; null when no entry is a prefix of it (cost unknown). */
  priceOf(model: string): ModelPrice | null {
    for (const [prefix, price] of this.#entries) if (model.startsWith(prefix)) return price;
    return null;
  }

  /** USD for this usage, or null for a model without a price. */
  costOf(model: string, usage: Pick<Usage, 'promptTokens' | 'completionTokens'>): number | null {
    const p = this.priceOf(model);
    if (!p) return null;
    return (usage.promptTokens * p.input + usage.completionTokens * p.output) / 1_000_000;
  }
}
