import crypto from 'node:crypto';

// The Idempotency-Key an http step sends: a hash of the run and the step's path in it (a loop item's
// sub-step: `<loop>[<index>].<sub>`), never of the attempt, so every retry and every resume after a crash
// sends the same key and a receiver following the Stripe convention does the work once (docs/workflows.md).

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

export function stepIdempotencyKey(runId: string, stepPath: string): string {
  const h = crypto.createHash('sha256').update(`${runId}\n${stepPath}`).digest('hex');
  return `pier-wf-${h.slice(0, 40)}`;
}

/** A loop item's sub-step path, as the key and the memo use it. */
export const itemPath = (loopPath: string, index: number, subId: string) => `${loopPath}[${index}].${subId}`;
