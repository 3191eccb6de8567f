import type { Environment } from '../../../core/auth/caller.ts';
import type { Deps } from '../../../deps.ts';

// What every step executor receives, the run's data its templates and expressions read, and the error a
// step throws when retrying cannot help (a bad reference, a provider without the capability).

export type StepData = {
  variables: Record<string, unknown>;
  steps: Record<string, { output: unknown }>;
  item?: unknown;
  index?: number;
};

export type StepCtx = {
  deps: Deps;
  orgId: string;
  environment: Environment;
  projectId: string;
  runId: string;
  /** The step's place in the run: its id, or `<loop>[<index>].<sub>` for a loop item's sub-step. */
  path: string;
  signal: AbortSignal;
  data: StepData;
};

export type StepResult = { output: unknown; credits: number };

export class StepError extends Error {
  readonly retryable: boolean;
  /** The HTTP status of the answer that failed the step, for the retry policy's non-retryable statuses. */
  readonly status?: number;
  constructor(message: string, retryable = false, status?: number) {
    super(message);
    this.retryable = retryable;
    if (status !== undefined) this.status = status;
  }
}

/** The value a `{{ref}}` names: a variable (with a path), `steps.<id>.output…`, or a loop's item/index. */
export function lookup(ref: string, data: StepData): unknown {
  const parts = ref.split('.');
  let cur: unknown;
  if (parts[0] === 'steps') {
    cur = data.steps[parts[1] ?? '']?.output;
    parts.splice(0, 3);
  } else if (parts[0] === 'item' || parts[0] === 'index') {
    cur = data[parts[0]];
    parts.splice(0, 1);
  } else {
    cur = data.variables[parts[0]!];
    parts.splice(0, 1);
  }
  for (const p of parts) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

/** Fills `{{ref}}` placeholders: strings as they are, other values as JSON, missing ones as ''. */
export function render(template: string, data: StepData): string {
  return template.replace(/\{\{\s*([^{}]*?)\s*\}\}/g, (_, ref: string) => {
    const v = lookup(ref, data);
    if (v === undefined || v === null) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

/** A template that is exactly one `{{ref}}` yields the value itself (an array stays an array). */
export function resolveValue(template: string, data: StepData): unknown {
  const m = /^\{\{\s*([^{}]*?)\s*\}\}$/.exec(template.trim());
  return m ? lookup(m[1]!, data) : render(template, data);
}
