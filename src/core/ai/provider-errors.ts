import { AISDKError, APICallError, RetryError, UnsupportedFunctionalityError } from 'ai';
import { ApiError } from '../errors.ts';
import { modelErrors } from './errors.ts';

// Turns whatever a provider call threw into our envelope: a provider's 429 stays a 429 (with its
// retry-after), its 5xx becomes a 502, an unreachable provider a 503, and a refusal of the request a 4xx.

function retryAfterSec(headers: Record<string, string> | undefined): number {
  const ms = Number(headers?.['retry-after-ms']);
  if (Number.isFinite(ms) && ms > 0) return Math.max(1, Math.ceil(ms / 1000));
  const s = Number(headers?.['retry-after']);
  return Number.isFinite(s) && s > 0 ? Math.ceil(s) : 1;
}

// Providers quote the credential they were given in their errors ("Incorrect API key provided: sk-…abcd"). The
// key may be the platform's, so anything shaped like a credential is cut before a tenant sees the message.
const CREDENTIAL_PATTERNS: RegExp[] = [
  // OpenAI, Anthropic, Mistral-style and masked keys: sk-…, sk-proj-****abcd, sk-ant-api03-…, rk-…, pk-…
  /\b(?:sk|rk|pk)[-_][^\s"',;)]*/gi,
  // Google API keys
  /\bAIza[0-9A-Za-z_-]{10,}/g,
  // Authorization values
  /\b(?:Bearer|Basic)\s+[^\s"',;]+/gi,
  // "api key: X", "token=X", "key provided: X"
  /\b((?:api[_ -]?)?(?:key|token|secret)(?:\s+provided)?\s*[:=]\s*)[^\s"',;]+/gi,
  // Long opaque strings of letters and digits (no hyphens, so model names survive)
  /\b(?=[A-Za-z0-9_]*\d)(?=[A-Za-z0-9_]*[A-Za-z])[A-Za-z0-9_]{24,}\b/g,
];

export function withoutCredentials(text: string): string {
  let out = text;
  for (const re of CREDENTIAL_PATTERNS)
    out = out.replace(re, (_m, label?: string) =>
      typeof label === 'string' ? `${label}[redacted]` : '[redacted]',
    );
  return out;
}

function providerMessage(body: string | undefined): string {
  if (!body) return 'no detail';
  let m: string = body;
  try {
    const j = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
    const found = typeof j.error === 'string' ? j.error : (j.error?.message ?? j.message);
    if (found) m = String(found);
  } catch {}
  return withoutCredentials(m.slice(0, 300));
}

/** Whether an error came from talking to a provider (as opposed to a bug of ours, which must stay a 500). */
export function isProviderFailure(err: unknown): boolean {
  const inner = RetryError.isInstance(err) ? err.lastError : err;
  if (APICallError.isInstance(inner) || AISDKError.isInstance(inner)) return true;
  return (
    inner instanceof Error &&
    /fetch failed|ECONNREFUSED|ECONNRESET|ENOTFOUND|socket|timeout|aborted/i.test(inner.message)
  );
}

/** A provider failure as our envelope; anything else (a bug) is rethrown unchanged by the callers. */
export function toApiError(err: unknown, provider: string): ApiError {
  if (err instanceof ApiError) return err;
  const inner = RetryError.isInstance(err) ? err.lastError : err;
  if (APICallError.isInstance(inner)) {
    const status = inner.statusCode;
    if (status === 429)
      return modelErrors.modelProviderRateLimited(provider, retryAfterSec(inner.responseHeaders));
    if (status === undefined) return modelErrors.modelProviderUnavailable(provider);
    if (status >= 500) return modelErrors.modelProviderError(provider, status);
    // A refused credential is the operator's (or the organization's stored key) to fix; the provider's own
    // words about it are not passed on at all.
    if (status === 401 || status === 403)
      return modelErrors.modelProviderRejected(provider, status, 'the provider refused the credentials');
    return modelErrors.modelProviderRejected(provider, status, providerMessage(inner.responseBody));
  }
  // The SDK's provider cannot express the request (an audio part for Anthropic, say): the caller's to change.
  if (UnsupportedFunctionalityError.isInstance(inner))
    return modelErrors.modelCapabilityUnsupported(
      provider,
      withoutCredentials(inner.functionality.slice(0, 200)),
    );
  if (inner instanceof Error && /fetch failed|ECONNREFUSED|ENOTFOUND|timeout|aborted/i.test(inner.message))
    return modelErrors.modelProviderUnavailable(provider);
  return modelErrors.modelProviderError(provider, undefined);
}

/** Whether another attempt may help: rate limits, server errors and unreachable providers. */
export function isRetryable(err: unknown): boolean {
  const inner = RetryError.isInstance(err) ? err.lastError : err;
  if (APICallError.isInstance(inner)) {
    const s = inner.statusCode;
    return s === undefined || s === 408 || s === 409 || s === 429 || s >= 500;
  }
  return inner instanceof Error && /fetch failed|ECONNREFUSED|ECONNRESET|socket/i.test(inner.message);
}

/** The delay before attempt n (1-based): the provider's retry-after when it gave one, else exponential. */
export function retryDelayMs(err: unknown, attempt: number, baseMs: number): number {
  const inner = RetryError.isInstance(err) ? err.lastError : err;
  if (APICallError.isInstance(inner)) {
    const h = inner.responseHeaders;
    const ms = Number(h?.['retry-after-ms']);
    if (Number.isFinite(ms) && ms >= 0 && ms <= 60_000) return ms;
    const s = Number(h?.['retry-after']);
    if (Number.isFinite(s) && s >= 0 && s <= 60) return Math.min(s * 1000, baseMs * 2 ** attempt);
  }
  return baseMs * 2 ** (attempt - 1);
}

/** Runs a provider call with our own retry policy (the SDK's own retries are turned off). */
export async function withRetry<T>(
  fn: () => Promise<T>,
  opts: { retries: number; baseMs: number; provider: string },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ApiError) && !isProviderFailure(err)) throw err;
      if (attempt > opts.retries || !isRetryable(err)) throw toApiError(err, opts.provider);
      await new Promise((r) => setTimeout(r, retryDelayMs(err, attempt, opts.baseMs)));
    }
  }
}
