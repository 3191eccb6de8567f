import { getQuickJS } from 'quickjs-emscripten';

// The evaluation itself, run inside a worker thread (sandbox-worker.ts): QuickJS compiled to WASM, a fresh
// runtime per call, with only the language — no process, require, fetch, timers or files (QuickJS's std/os
// modules are not loaded) — a memory limit, a stack limit and a deadline checked by the interrupt handler.

export type SandboxResult = { ok: true; value: unknown } | { ok: false; error: string };
export type SandboxOptions = { timeLimitMs: number; memoryLimitMb: number; signal?: AbortSignal };

export async function evalInQuickJS(
  code: string,
  input: unknown,
  opts: SandboxOptions,
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
