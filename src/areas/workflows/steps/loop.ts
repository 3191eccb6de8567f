import type { StepDef } from '../definition.ts';
import { price, roundCredits } from '../prices.ts';
import { resolveValue, type StepCtx, StepError, type StepResult } from './context.ts';
import { evaluate } from './transform.ts';

// loop steps: the items (a `{{…}}` reference or a JSONata expression) must be an array of at most maxItems;
// each item runs the loop's sub-steps in order, items in parallel up to `concurrency`. The loop is one
// durable unit: its output (one object per item, keyed by each sub-step's outputVariable or id) is stored
// when every item finished, and a crash mid-loop runs the loop again (docs/workflows.md).

export const LOOP_DEFAULTS = { maxItems: 100, concurrency: 4 };

type RunOne = (c: StepCtx, s: StepDef) => Promise<StepResult>;

export async function runLoop(c: StepCtx, s: StepDef, runOne: RunOne): Promise<StepResult> {
  const raw = s.items?.includes('{{')
    ? resolveValue(s.items, c.data)
    : await evaluate(s.items ?? '', c.data, c.signal);
  if (!Array.isArray(raw))
    throw new StepError(`Loop items must be an array, got ${raw === null ? 'null' : typeof raw}.`);
  const max = s.maxItems ?? LOOP_DEFAULTS.maxItems;
  if (raw.length > max) throw new StepError(`Loop has ${raw.length} items; at most ${max} are allowed.`);
  const results: Record<string, unknown>[] = new Array(raw.length);
  let credits = price(c.deps, 'loop.perStep');
  let next = 0;
  const worker = async () => {
    for (;;) {
      const index = next++;
      if (index >= raw.length) return;
      const steps = { ...c.data.steps };
      const out: Record<string, unknown> = {};
      for (const sub of s.steps ?? []) {
        if (c.signal.aborted) throw new StepError('Cancelled.');
        const r = await runOne({ ...c, data: { ...c.data, steps, item: raw[index], index } }, sub).catch(
          (err) => {
            throw new StepError(
              `Item ${index}, sub-step '${sub.id}': ${(err as Error).message}`,
              (err as StepError).retryable ?? false,
            );
          },
        );
        steps[sub.id] = { output: r.output };
        out[sub.outputVariable ?? sub.id] = r.output;
        credits += r.credits;
      }
      results[index] = out;
    }
  };
  const n = Math.min(s.concurrency ?? LOOP_DEFAULTS.concurrency, Math.max(1, raw.length));
  await Promise.all(Array.from({ length: n }, worker));
  return { output: results, credits: roundCredits(credits) };
}
