import type { StepDef } from '../definition.ts';
import { price } from '../prices.ts';
import { type StepCtx, StepError, type StepResult } from './context.ts';
import type { SandboxResult } from './quickjs-eval.ts';
import { evalInPool } from './sandbox-pool.ts';

// code steps: JavaScript in QuickJS/WASM (quickjs-eval.ts), a fresh QuickJS runtime per step on a warm pool of
// threads (sandbox-pool.ts). The code is the body of `function (input) { … }`; input is the run's data as
// JSON, the return value (or what a returned Promise resolves to) must be JSON.

export const CODE_DEFAULTS = { timeLimitMs: 1000, memoryLimitMb: 64 };
/** A step's output, as JSON, at most, unless configured (WORKFLOW_STEP_OUTPUT_MAX_KB); the engine checks every step. */
const MAX_STEP_OUTPUT_BYTES = 1024 * 1024;

export type SandboxOptions = {
  timeLimitMs: number;
  memoryLimitMb: number;
  maxOutputBytes?: number;
  signal?: AbortSignal;
};

export function runInSandbox(code: string, input: unknown, opts: SandboxOptions): Promise<SandboxResult> {
  const { signal, maxOutputBytes = MAX_STEP_OUTPUT_BYTES, ...limits } = opts;
  return evalInPool(code, input, { ...limits, maxOutputBytes }, signal);
}

export async function runCode(c: StepCtx, s: StepDef): Promise<StepResult> {
  const res = await runInSandbox(s.code ?? '', c.data, {
    timeLimitMs: s.timeLimitMs ?? CODE_DEFAULTS.timeLimitMs,
    memoryLimitMb: s.memoryLimitMb ?? CODE_DEFAULTS.memoryLimitMb,
    maxOutputBytes: c.deps.config.workflows.stepOutputMaxBytes,
    signal: c.signal,
  });
  if (!res.ok) throw new StepError(`Code failed: ${res.error}`);
  return { output: res.value, credits: price(c.deps, 'code.perStep') };
}
