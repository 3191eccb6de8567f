import { getQuickJS, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime } from 'quickjs-emscripten';

// The evaluation itself, run inside a pooled worker thread (sandbox-worker.ts): QuickJS compiled to WASM, a
// fresh context (own global object and built-ins) per call, with only the language — no process, require,
// fetch, timers or files (QuickJS's std/os modules are not loaded) — a memory limit, a stack limit and a
// deadline checked by the interrupt handler, which also reads a shared cancel flag the pool sets when the step
// is aborted. The runtime (heap, limits) is kept between calls that end well — a new one costs about 0.5 ms
// more — and replaced after any failure, so an out-of-memory or an interrupted evaluation leaves nothing behind.
// A returned Promise is settled by draining QuickJS's job queue; with no timers or I/O in the sandbox, one
// still pending after that can never settle, and is refused.

export type SandboxResult = { ok: true; value: unknown } | { ok: false; error: string };
export type SandboxLimits = { timeLimitMs: number; memoryLimitMb: number; maxOutputBytes: number };

const describe = (vm: QuickJSContext, h: QuickJSHandle): string => {
  const d = vm.dump(h) as { name?: string; message?: string } | string;
  return typeof d === 'string' ? d : `${d?.name ?? 'Error'}: ${d?.message ?? ''}`;
};

/** The runtime the last call left in good order (a thread evaluates one call at a time). */
let kept: QuickJSRuntime | null = null;
let uses = 0;
const REUSES = 100;

export async function evalInQuickJS(
  code: string,
  input: unknown,
  opts: SandboxLimits,
  cancel?: Int32Array,
): Promise<SandboxResult> {
  if (!kept) uses = 0;
  const runtime = kept ?? (await getQuickJS()).newRuntime();
  kept = null;
  let healthy = false;
  runtime.setMemoryLimit(opts.memoryLimitMb * 1024 * 1024);
  runtime.setMaxStackSize(512 * 1024);
  const deadline = Date.now() + opts.timeLimitMs;
  let timedOut = false;
  const cancelled = () => (cancel ? Atomics.load(cancel, 0) === 1 : false);
  runtime.setInterruptHandler(() => {
    if (cancelled()) return true;
    if (Date.now() > deadline) timedOut = true;
    return timedOut;
  });
  const vm = runtime.newContext();
  const failure = (msg: string): SandboxResult => {
    if (cancelled()) return { ok: false, error: 'Cancelled.' };
    if (timedOut) return { ok: false, error: `Time limit of ${opts.timeLimitMs} ms exceeded.` };
    if (/out of memory/i.test(msg))
      return { ok: false, error: `Memory limit of ${opts.memoryLimitMb} MB exceeded.` };
    return { ok: false, error: msg };
  };
  try {
    const src = `(function (input) {\n${code}\n})(${JSON.stringify(input ?? null)})`;
    const res = vm.evalCode(src, 'step.js');
    if (res.error) {
      const msg = describe(vm, res.error);
      res.error.dispose();
      return failure(msg);
    }
    let value = res.value;
    const first = vm.getPromiseState(value);
    if (!(first.type === 'fulfilled' && first.notAPromise)) {
      if (first.type === 'fulfilled') first.value.dispose();
      if (first.type === 'rejected') first.error.dispose();
      const jobs = runtime.executePendingJobs();
      if (jobs.error) {
        const msg = describe(vm, jobs.error);
        jobs.error.dispose();
        value.dispose();
        return failure(msg);
      }
      const state = vm.getPromiseState(value);
      value.dispose();
      if (state.type === 'pending')
        return {
          ok: false,
          error:
            'The code returned a Promise that never settles: the sandbox has no timers or I/O to wait for.',
        };
      if (state.type === 'rejected') {
        const msg = describe(vm, state.error);
        state.error.dispose();
        return failure(`The returned Promise was rejected: ${msg}`);
      }
      value = state.value;
    }
    const json = vm.getProp(vm.global, 'JSON');
    const stringify = vm.getProp(json, 'stringify');
    const out = vm.callFunction(stringify, json, value);
    stringify.dispose();
    json.dispose();
    value.dispose();
    if (out.error) {
      const msg = describe(vm, out.error);
      out.error.dispose();
      return failure(`The result is not JSON: ${msg}`);
    }
    const text = vm.typeof(out.value) === 'string' ? vm.getString(out.value) : 'null';
    out.value.dispose();
    const bytes = Buffer.byteLength(text);
    healthy = true;
    if (bytes > opts.maxOutputBytes) return { ok: false, error: outputTooLarge(bytes, opts.maxOutputBytes) };
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return failure(String((err as Error)?.message ?? err));
  } finally {
    // After an out-of-memory the runtime may refuse a clean dispose; it is garbage either way.
    try {
      vm.dispose();
      // A kept runtime is also replaced every REUSES calls: garbage a context's cycles left is gone with it.
      if (healthy && ++uses < REUSES) kept = runtime;
      else runtime.dispose();
    } catch {}
  }
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

export const outputTooLarge = (bytes: number, max: number) =>
  `Output too large: ${mb(bytes)} of JSON, over the ${mb(max)} limit for a step's output.`;
