import { readFileSync } from 'node:fs';
import { z } from 'zod';

// The operator's model prices (MODEL_PRICES, MODEL_PRICES_FILE), read once with the rest of the config.
// Kept beside config.ts so that file stays within its size; only config.ts calls it.

/** USD per 1M input (prompt) and output (completion) tokens. */
export type ModelPrice = { input: number; output: number };

const priceTable = z.record(
  z.string().regex(/^[a-z-]+\/.+$/, 'keys must look like <provider>/<model or model prefix>'),
  z.strictObject({ input: z.number().min(0).max(100_000), output: z.number().min(0).max(100_000) }),
);

function parseTable(text: string, where: string): { prices?: Record<string, ModelPrice>; problem?: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { problem: `${where}: not JSON` };
  }
  const parsed = priceTable.safeParse(raw);
  if (!parsed.success)
    return {
      problem: `${where}: must map "<provider>/<model>" to {"input": USD per 1M tokens, "output": …} (${parsed.error.issues[0]?.message})`,
    };
  return { prices: parsed.data };
}

/**
 * The overrides: MODEL_PRICES_FILE (a JSON file) first, then MODEL_PRICES (JSON in the variable), whose
 * entries win. Returns the problems instead of throwing so loadConfig lists them with the others.
 */
export function loadModelPrices(env: { MODEL_PRICES?: string; MODEL_PRICES_FILE?: string }): {
  prices: Record<string, ModelPrice>;
  problems: string[];
} {
  const problems: string[] = [];
  let prices: Record<string, ModelPrice> = {};
  if (env.MODEL_PRICES_FILE) {
    let text: string | undefined;
    try {
      text = readFileSync(env.MODEL_PRICES_FILE, 'utf8');
    } catch {
      problems.push(`MODEL_PRICES_FILE: cannot read ${env.MODEL_PRICES_FILE}`);
    }
    if (text !== undefined) {
      const r = parseTable(text, 'MODEL_PRICES_FILE');
      if (r.problem) problems.push(r.problem);
      else prices = { ...prices, ...r.prices };
    }
  }
  if (env.MODEL_PRICES) {
    const r = parseTable(env.MODEL_PRICES, 'MODEL_PRICES');
    if (r.problem) problems.push(r.problem);
    else prices = { ...prices, ...r.prices };
  }
  return { prices, problems };
}
