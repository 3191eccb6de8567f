import jsonata from 'jsonata';
import type { StepDef } from '../definition.ts';
import { price } from '../prices.ts';
import { type StepCtx, StepError, type StepResult } from './context.ts';

// transform and condition steps: JSONata over the run's data ({ variables, steps: { <id>: { output } } }).
// JSONata has no I/O; evaluation is bounded by its time and depth guardrails.

const EVAL_LIMIT_MS = 2000;

export async function evaluate(expression: string, data: unknown, signal?: AbortSignal): Promise<unknown> {
  let expr: ReturnType<typeof jsonata>;
  try {
    // JSONata's own guardrails: a deadline and a depth limit, checked at every evaluation step.
    const limits = { timeout: EVAL_LIMIT_MS, stack: 500, sequence: 100_000 };
    expr = (jsonata as unknown as (e: string, o: unknown) => ReturnType<typeof jsonata>)(expression, limits);
  } catch (err) {
    throw new StepError(`Invalid expression: ${(err as Error).message}`);
  }
  // Cancel reaches a running expression through the evaluation-entry hook.
  const hook = Symbol.for('jsonata.__evaluate_entry') as unknown as string;
  expr.assign(hook, () => {
    if (signal?.aborted) throw new StepError('Cancelled.');
  });
  try {
    const v = await expr.evaluate(data);
    return v === undefined ? null : JSON.parse(JSON.stringify(v));
  } catch (err) {
    if (err instanceof StepError) throw err;
    const e = err as { message?: string; code?: string };
    throw new StepError(`Expression failed: ${e.message ?? e.code ?? String(err)}`);
  }
}

export async function runTransform(c: StepCtx, s: StepDef): Promise<StepResult> {
  return {
    output: await evaluate(s.expression ?? '', c.data, c.signal),
    credits: price(c.deps, 'transform.perStep'),
  };
}

/** The output is the branch taken as a boolean; the scheduler skips the other branch's steps. */
export async function runCondition(c: StepCtx, s: StepDef): Promise<StepResult> {
  const v = await evaluate(s.expression ?? '', c.data, c.signal);
  return { output: Boolean(v), credits: price(c.deps, 'condition.perStep') };
}
