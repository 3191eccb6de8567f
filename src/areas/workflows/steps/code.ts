import { getQuickJS } from 'quickjs-emscripten';
import type { StepDef } from '../definition.ts';
import { price } from '../prices.ts';
import { type StepCtx, StepError, type StepResult } from './context.ts';

// code steps: JavaScript in QuickJS compiled to WASM, one fresh runtime per run of the step. The guest has
// only the language: no process, require, fetch, timers or files (QuickJS's std/os modules are not loaded),
// a memory limit, a stack limit and a deadline enforced by the interrupt handler (which also honours cancel).
// The code is the body of `function (input) { … }`; input is the run's data as JSON, the return value must
// be JSON. The evaluation is synchronous, so the time limit stays well under the step lease.

export const CODE_DEFAULTS = { timeLimitMs: 1000, memoryLimitMb: 64 };

export type SandboxResult = { ok: true; value: unknown } | { ok: false; error: string };

export async function runInSandbox(
  code: string,
  input: unknown,
  opts: { timeLimitMs: number; memoryLimitMb: number; signal?: AbortSignal },
): Promise<SandboxResult> {
  const QuickJS = await getQuickJS();
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(opts.memoryLimitMb * 1024 * 1024);
  runtime.setMaxStackSize(512 * 1024);
  const deadline = Date.now() + opts.timeLimitMs;
  let timedOut = false;
  runtime.setInterruptHandler(() => {
    if (opts.signal?.aborted) return true;
    if (Date.now() > deadline) timedOut = true;
    return timedOut;
  });
  const vm = runtime.newContext();
  try {
    const src = `JSON.stringify((function (input) {\n${code}\n})(${JSON.stringify(input ?? null)}) ?? null)`;
    const res = vm.evalCode(src, 'step.js');
    if (res.error) {
      const dumped = vm.dump(res.error) as { name?: string; message?: string } | string;
      res.error.dispose();
      if (opts.signal?.aborted) return { ok: false, error: 'Cancelled.' };
      if (timedOut) return { ok: false, error: `Time limit of ${opts.timeLimitMs} ms exceeded.` };
      const msg =
        typeof dumped === 'string' ? dumped : `${dumped?.name ?? 'Error'}: ${dumped?.message ?? ''}`;
      if (/out of memory/i.test(msg))
        return { ok: false, error: `Memory limit of ${opts.memoryLimitMb} MB exceeded.` };
      return { ok: false, error: msg };
    }
    const text = vm.getString(res.value);
    res.value.dispose();
    return { ok: true, value: text === undefined ? null : JSON.parse(text) };
  } catch (err) {
    const msg = String((err as Error)?.message ?? err);
    if (/memory/i.test(msg))
      return { ok: false, error: `Memory limit of ${opts.memoryLimitMb} MB exceeded.` };
    return { ok: false, error: msg };
  } finally {
    // After an out-of-memory the runtime may refuse a clean dispose; it is garbage either way.
    try {
      vm.dispose();
      runtime.dispose();
    } catch {}
  }
}

export async function runCode(c: StepCtx, s: StepDef): Promise<StepResult> {
  const res = await runInSandbox(s.code ?? '', c.data, {
    timeLimitMs: s.timeLimitMs ?? CODE_DEFAULTS.timeLimitMs,
    memoryLimitMb: s.memoryLimitMb ?? CODE_DEFAULTS.memoryLimitMb,
    signal: c.signal,
  });
  if (!res.ok) throw new StepError(`Code failed: ${res.error}`);
  return { output: res.value, credits: price(c.deps, 'code.perStep') };
}
