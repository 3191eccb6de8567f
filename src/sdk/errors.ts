/**
 * Every failure of a call, from the server's `{ error: { code, message } }` envelope or from the client
 * itself. Client-side codes: NETWORK_ERROR (no answer; status 0), TIMEOUT (status 0) and BAD_RESPONSE
 * (an answer that is not Pier's JSON; the HTTP status is kept).
 */
export class PierApiError extends Error {
  readonly code: string;
  /** HTTP status, or 0 when no answer arrived. */
  readonly status: number;
  readonly requestId?: string;
  /** Seconds to wait before retrying, from Retry-After (429). */
  readonly retryAfterSec?: number;

  constructor(
    code: string,
    status: number,
    message: string,
    extra: { requestId?: string; retryAfterSec?: number; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'PierApiError';
    this.code = code;
    this.status = status;
    this.requestId = extra.requestId;
    this.retryAfterSec = extra.retryAfterSec;
  }
}

export function isPierApiError(err: unknown): err is PierApiError {
  return err instanceof PierApiError;
}

type Envelope = { error: { code: string; message: string } };

function isEnvelope(body: unknown): body is Envelope {
  const e = (body as { error?: unknown } | null)?.error as { code?: unknown; message?: unknown } | undefined;
  return typeof e?.code === 'string' && typeof e?.message === 'string';
}

/** Maps a non-2xx answer to a PierApiError; a body that is not the envelope still yields a clear error. */
export function errorFromResponse(
  status: number,
  statusText: string,
  bodyText: string,
  headers: { get(name: string): string | null },
): PierApiError {
  const requestId = headers.get('x-request-id') ?? undefined;
  const retry = Number(headers.get('retry-after'));
  const retryAfterSec = Number.isFinite(retry) && retry > 0 ? retry : undefined;
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  if (isEnvelope(body)) {
    return new PierApiError(body.error.code, status, body.error.message, { requestId, retryAfterSec });
  }
  const reason = statusText ? ` (${statusText})` : '';
  return new PierApiError(
    'BAD_RESPONSE',
    status,
    `The server answered HTTP ${status}${reason} without a Pier error body; is the URL a Pier server?`,
    { requestId, retryAfterSec },
  );
}

/** Maps a thrown fetch failure (refused, DNS, reset, abort) to a PierApiError naming the URL. */
export function errorFromFetchFailure(err: unknown, url: string, timeoutMs: number): PierApiError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new PierApiError('TIMEOUT', 0, `No answer from ${url} within ${timeoutMs} ms.`, { cause: err });
  }
  const detail = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new PierApiError('NETWORK_ERROR', 0, `Could not reach Pier at ${url} (${detail}).`, { cause: err });
}
