import { ApiError } from '../../../core/errors.ts';
import { safeFetch } from '../../../core/net/safe-fetch.ts';
import type { StepDef } from '../definition.ts';
import { IDEMPOTENCY_HEADER, stepIdempotencyKey } from '../idempotency.ts';
import { price } from '../prices.ts';
import { statusRetryable } from '../retry-policy.ts';
import { render, type StepCtx, StepError, type StepResult } from './context.ts';

// http steps: through the one SSRF-guarded fetch with the operator's OUTBOUND_ALLOW, a deadline and a
// response size cap; the run's cancel aborts the request (the server sees the connection close). Every
// request carries an Idempotency-Key stable across the step's retries and crash recoveries (idempotency.ts)
// unless the step sets that header itself (an empty value sends none).

export const HTTP_DEFAULTS = { timeoutMs: 15_000, maxBytes: 1024 * 1024 };

function bodyOf(s: StepDef, c: StepCtx): { body?: string; json: boolean } {
  if (s.body === undefined || s.body === null) return { json: false };
  if (typeof s.body === 'string') return { body: render(s.body, c.data), json: false };
  // An object body: string values inside it are templates too.
  const walk = (v: unknown): unknown =>
    typeof v === 'string'
      ? render(v, c.data)
      : Array.isArray(v)
        ? v.map(walk)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
          : v;
  return { body: JSON.stringify(walk(s.body)), json: true };
}

/** The request a step sends, templates filled (also what the run page shows as its input). */
export function requestOf(c: StepCtx, s: StepDef) {
  const url = render(s.url ?? '', c.data);
  const headers = Object.fromEntries(Object.entries(s.headers ?? {}).map(([k, v]) => [k, render(v, c.data)]));
  const own = Object.keys(headers).find((h) => h.toLowerCase() === IDEMPOTENCY_HEADER.toLowerCase());
  if (own === undefined) headers[IDEMPOTENCY_HEADER] = stepIdempotencyKey(c.runId, c.path);
  else if (headers[own] === '') delete headers[own];
  const { body, json } = bodyOf(s, c);
  if (json && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  return { method: s.method ?? (body ? 'POST' : 'GET'), url, headers, body };
}

export async function runHttp(c: StepCtx, s: StepDef): Promise<StepResult> {
  const { method, url, headers, body } = requestOf(c, s);
  let res: Awaited<ReturnType<typeof safeFetch>>;
  try {
    res = await safeFetch(url, {
      method,
      headers,
      body,
      timeoutMs: s.timeoutMs ?? HTTP_DEFAULTS.timeoutMs,
      maxBytes: s.maxBytes ?? HTTP_DEFAULTS.maxBytes,
      outboundAllow: c.deps.config.outboundAllow,
      signal: c.signal,
    });
  } catch (err) {
    if (c.signal.aborted) throw err;
    // Blocked addresses and bad URLs stay blocked; timeouts and connection failures may pass.
    const e = err as ApiError;
    const retryable = !(e instanceof ApiError) || e.status >= 500 || e.status === 408 || e.status === 504;
    throw new StepError(`HTTP request failed: ${e.message}`, retryable);
  }
  if (!res.ok)
    throw new StepError(`HTTP ${res.status} from ${url}.`, statusRetryable(res.status), res.status);
  const type = res.headers.get('content-type') ?? '';
  const wantJson =
    s.responseType === 'json' || ((s.responseType ?? 'auto') === 'auto' && type.includes('json'));
  let parsed: unknown = res.text();
  if (wantJson) {
    try {
      parsed = res.json();
    } catch {
      throw new StepError(`The response of ${url} is not JSON.`);
    }
  }
  return {
    output: { status: res.status, headers: Object.fromEntries(res.headers), body: parsed },
    credits: price(c.deps, 'http.perStep'),
  };
}
