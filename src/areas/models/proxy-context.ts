import type { ResolvedModel } from '../../core/ai/providers.ts';
import type { ErrorCode } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import type { CallCheck } from './budgets.ts';
import type { UsageBuffer } from './model-usage.ts';

// What the model proxy (proxy-v1.ts) hands each of its routes (chat-completions.ts, embeddings-v1.ts), in a
// file of its own so the routes need not import the proxy that imports them.

export type ProxyContext = {
  deps: Deps;
  usage: UsageBuffer;
  resolve: (orgId: string, model: string) => Promise<ResolvedModel>;
  /** Before the provider is called: the key's allow-list and the budgets (budgets.ts); throws to refuse. */
  guard: (c: CallCheck) => Promise<void>;
};

/** The model proxy's errors beyond the shared ones (its 502/503 come from the provider). */
export const PROXY_ERRORS: readonly ErrorCode[] = [
  'MODEL_NOT_AVAILABLE',
  'INVALID_MODEL',
  'MODEL_CAPABILITY_UNSUPPORTED',
  'MODEL_PROVIDER_RATE_LIMITED',
  'MODEL_PROVIDER_REJECTED',
  'MODEL_PROVIDER_ERROR',
  'MODEL_PROVIDER_UNAVAILABLE',
  'MODEL_NOT_ALLOWED',
  'BUDGET_EXCEEDED',
  'IDEMPOTENCY_CONFLICT',
  'IDEMPOTENCY_IN_PROGRESS',
];
