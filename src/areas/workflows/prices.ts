import type { Deps } from '../../deps.ts';

// The credit price table (docs/workflows.md). An operator changes any entry with WORKFLOW_PRICES, a JSON
// object of the same keys, e.g. {"llm.openai.per1kTokens": 0.8, "image.perImage": 5}.

export const DEFAULT_PRICES = {
  'llm.openai.per1kTokens': 0.5,
  'llm.anthropic.per1kTokens': 0.6,
  'llm.google.per1kTokens': 0.3,
  'llm.mistral.per1kTokens': 0.3,
  'llm.pier.per1kTokens': 0.1,
  'image.perImage': 4,
  'audio.perSecond': 0.05,
  'video.perSecond': 0.5,
  'code.perStep': 0.01,
  'http.perStep': 0.01,
  'transform.perStep': 0,
  'condition.perStep': 0,
  'loop.perStep': 0,
} as const;
export type PriceKey = keyof typeof DEFAULT_PRICES;

export function price(deps: Deps, key: PriceKey): number {
  return deps.config.workflows.prices[key] ?? DEFAULT_PRICES[key];
}

/** Credits are kept to 4 decimals so sums stay exact enough to read. */
export const roundCredits = (n: number) => Math.round(n * 10_000) / 10_000;
