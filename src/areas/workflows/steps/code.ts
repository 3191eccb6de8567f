import { Worker } from 'node:worker_threads';
import type { StepDef } from '../definition.ts';
import { price } from '../prices.ts';
import { type StepCtx, StepError, type StepResult } from './context.ts';
import type { SandboxOptions, SandboxResult } from './quickjs-eval.ts';

// code steps: JavaScript in QuickJS/WASM (quickjs-eval.ts) inside a worker thread of its own. The thread keeps
// the engine's event loop (lease heartbeats, other steps) free while guest code runs, and it is terminated
// outright when the guest overruns its time limit by a grace period (QuickJS near its memory limit collects
// garbage on every allocation and reaches its interrupt check only rarely) or when the run is cancelled.
// The code is the body of `function (input) { … }`; input is the run's data as JSON, the return value must be
// JSON.

export const CODE_DEFAULTS = { timeLimitMs: 1000, memoryLimitMb: 64 };
const GRACE_MS = 1000;
const STARTUP_LIMIT_MS = 30_000;

export function runInSandbox(code: string, input: unknown, opts: SandboxOptions): Promise<SandboxResult> {
  if (opts.signal?.aborted) return Promise.resolve({ ok: false, error: 'Cancelled.' });
  const { signal, ...limits } = opts;
  return new Promise((resolve) => {
    const worker = new Worker(new URL('./sandbox-worker.ts', import.meta.url), {
      workerData: { code, input: input ?? null, opts: limits },
      // The thread's own JavaScript heap: the guest's memory is WASM memory, capped by QuickJS.
      resourceLimits: { maxOldGenerationSizeMb: 64 + limits.memoryLimitMb },
    });
    let settled = false;
    const finish = (r: SandboxResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      resolve(r);
    };
    // The guest's clock starts when the thread has loaded QuickJS (a cold start on a busy machine is slow).
    let timer = setTimeout(
      () => finish({ ok: false, error: 'The sandbox did not start in time.' }),
      STARTUP_LIMIT_MS,
    );
    const onAbort = () => finish({ ok: false, error: 'Cancelled.' });
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: SandboxResult | 'ready') => {
      if (m !== 'ready') return finish(m);
      clearTimeout(timer);
      timer = setTimeout(
        () => finish({ ok: false, error: `Time limit of ${limits.timeLimitMs} ms exceeded.` }),
        limits.timeLimitMs + GRACE_MS,
      );
    });
    worker.once('error', (err) =>
      finish({
        ok: false,
        error: /memory/i.test(String(err))
          ? `Memory limit of ${limits.memoryLimitMb} MB exceeded.`
          : `Sandbox failed: ${String((err as Error)?.message ?? err)}`,
      }),
    );
    worker.once('exit', () => finish({ ok: false, error: 'The sandbox stopped without a result.' }));
  });
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
