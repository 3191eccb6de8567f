import { ApiError } from '../../core/errors.ts';
import type { StepDef } from './definition.ts';
import { StepError } from './steps/context.ts';

// When a failed step (or a loop item's sub-step) is tried again, and after how long. Only failures count as
// attempts: a worker that died under a step is a crash, counted apart (engine.ts, CRASH_LIMIT).

export const DEFAULT_RETRY = { maxAttempts: 3, backoffMs: 1000, backoffCoefficient: 2, maxBackoffMs: 60_000 };
/** A step whose worker died this many times is failed rather than claimed again (a poison step). */
export const CRASH_LIMIT = 5;

export type RetryPolicy = typeof DEFAULT_RETRY & NonNullable<StepDef['retry']>;

export function retryPolicy(s: StepDef): RetryPolicy {
  return { ...DEFAULT_RETRY, ...s.retry };
}

/** The wait before attempt `failed + 1`, after `failed` attempts failed (1-based). */
export function backoffFor(p: RetryPolicy, failed: number): number {
  return Math.min(p.maxBackoffMs, p.backoffMs * p.backoffCoefficient ** Math.max(0, failed - 1));
}

/** The default for an HTTP status: server errors, 408 and 429 may pass on another try; other 4xx will not. */
export function statusRetryable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429 || status < 400;
}

export function isRetryable(err: unknown, p: RetryPolicy): boolean {
  const message = String((err as Error)?.message ?? err);
  if (p.nonRetryableErrors?.some((m) => message.includes(m))) return false;
  if (err instanceof StepError) {
    if (err.status !== undefined)
      return p.nonRetryableStatuses
        ? !p.nonRetryableStatuses.includes(err.status)
        : statusRetryable(err.status);
    return err.retryable;
  }
  if (err instanceof ApiError) return err.status >= 500 || err.status === 429 || err.status === 408;
  return true;
}

/** What a `continueOnError` step outputs when it failed for good: later steps and conditions read `error`. */
export function failureOutput(err: unknown, attempts: number): { error: Record<string, unknown> } {
  const message = String((err as Error)?.message ?? err).slice(0, 1000);
  const status = err instanceof StepError ? err.status : undefined;
  return { error: { message, attempts, ...(status !== undefined ? { status } : {}) } };
}

/** Waits `ms`, or less when the signal fires (the caller then sees the signal aborted). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((ok) => {
    if (signal.aborted) return ok();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      ok();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
