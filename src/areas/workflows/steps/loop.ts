import type { StepDef } from '../definition.ts';
import { itemPath } from '../idempotency.ts';
import { loadLoopMemo, memoKey, saveLoopItem, saveLoopProgress } from '../loop-memo.ts';
import { price, roundCredits } from '../prices.ts';
import { backoffFor, failureOutput, isRetryable, pause, retryPolicy } from '../retry-policy.ts';
import { resolveValue, type StepCtx, StepError, type StepResult } from './context.ts';
import { evaluate } from './transform.ts';

// loop steps: the items (a `{{…}}` reference or a JSONata expression over the run's stored data, so the same
// on every claim) must be an array of at most maxItems; each item runs the loop's sub-steps in order, items
// in parallel up to `concurrency`. Each item's sub-steps are memoised as they complete (loop-memo.ts), so a
// loop claimed again after a crash runs only what had not completed; a sub-step's `retry` is spent per item,
// in place. A sub-step that fails for good fails the loop (not retried as a whole: its items had their
// retries) unless it has `continueOnError`. The output is one object per item, keyed by each sub-step's
// outputVariable or id.

export const LOOP_DEFAULTS = { maxItems: 100, concurrency: 4 };

type RunOne = (c: StepCtx, s: StepDef) => Promise<StepResult>;

async function items(c: StepCtx, s: StepDef): Promise<unknown[]> {
  const raw = s.items?.includes('{{')
    ? resolveValue(s.items, c.data)
    : await evaluate(s.items ?? '', c.data, c.signal);
  if (!Array.isArray(raw))
    throw new StepError(`Loop items must be an array, got ${raw === null ? 'null' : typeof raw}.`);
  const max = s.maxItems ?? LOOP_DEFAULTS.maxItems;
  if (raw.length > max) throw new StepError(`Loop has ${raw.length} items; at most ${max} are allowed.`);
  return raw;
}

/** One sub-step of one item with its retry policy; a final failure is `{ error }` under continueOnError. */
async function runSub(c: StepCtx, sub: StepDef, runOne: RunOne): Promise<StepResult & { attempts: number }> {
  const policy = retryPolicy(sub);
  for (let attempt = 1; ; attempt++) {
    try {
      return { ...(await runOne(c, sub)), attempts: attempt };
    } catch (err) {
      if (c.signal.aborted) throw err;
      if (attempt < policy.maxAttempts && isRetryable(err, policy)) {
        await pause(backoffFor(policy, attempt), c.signal);
        if (c.signal.aborted) throw err;
        continue;
      }
      if (sub.continueOnError) return { output: failureOutput(err, attempt), credits: 0, attempts: attempt };
      const tries = attempt > 1 ? ` (after ${attempt} attempts)` : '';
      throw new StepError(`Item ${c.data.index}, sub-step '${sub.id}': ${(err as Error).message}${tries}`);
    }
  }
}

export async function runLoop(c: StepCtx, s: StepDef, runOne: RunOne): Promise<StepResult> {
  const list = await items(c, s);
  const subs = s.steps ?? [];
  const memo = await loadLoopMemo(c.deps, c.runId, c.path);
  const done = (i: number) => subs.every((sub) => memo.has(memoKey(i, sub.id)));
  let completed = list.filter((_, i) => done(i)).length;
  await saveLoopProgress(c.deps, c.runId, c.path, completed, list.length);
  // The first failure stops the other items' sub-steps (a cancel of the run does too).
  const ac = new AbortController();
  const stop = () => ac.abort(c.signal.reason);
  c.signal.addEventListener('abort', stop, { once: true });
  const results: Record<string, unknown>[] = new Array(list.length);
  let credits = price(c.deps, 'loop.perStep');
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < list.length && !ac.signal.aborted; index = next++) {
      const steps = { ...c.data.steps };
      const out: Record<string, unknown> = {};
      for (const sub of subs) {
        let r = memo.get(memoKey(index, sub.id));
        if (!r) {
          if (ac.signal.aborted) throw new StepError('Cancelled.');
          const data = { ...c.data, steps, item: list[index], index };
          const path = itemPath(c.path, index, sub.id);
          const ran = await runSub({ ...c, data, path, signal: ac.signal }, sub, runOne);
          r = { output: ran.output, credits: ran.credits };
          await saveLoopItem(
            c.deps,
            { runId: c.runId, stepId: c.path, index, subId: sub.id },
            { ...r, attempts: ran.attempts },
          );
        }
        steps[sub.id] = { output: r.output };
        out[sub.outputVariable ?? sub.id] = r.output;
        credits += r.credits;
      }
      results[index] = out;
      if (!done(index)) {
        completed++;
        await saveLoopProgress(c.deps, c.runId, c.path, completed, list.length);
      }
    }
  };
  const n = Math.min(s.concurrency ?? LOOP_DEFAULTS.concurrency, Math.max(1, list.length));
  let failure: unknown = null;
  await Promise.all(
    Array.from({ length: n }, () =>
      worker().catch((err) => {
        failure ??= err;
        stop();
      }),
    ),
  );
  c.signal.removeEventListener('abort', stop);
  if (failure) throw failure;
  return { output: results, credits: roundCredits(credits) };
}
