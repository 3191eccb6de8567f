// The error envelope, the way a catalogue is written, and the codes every transport and area shares. Each area
// owns its codes in `src/areas/<area>/errors.ts`, and each infrastructure module beside itself
// (`core/ai/errors.ts`, `core/blobs/errors.ts`, `core/browser/errors.ts`, `core/net/errors.ts`); services
// throw only through those catalogues, and one Fastify handler renders the envelope.

export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(code: string, status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.headers = headers;
  }
}

export type ErrorBody = { error: { code: string; message: string } };

export function errorBody(err: ApiError): ErrorBody {
  return { error: { code: err.code, message: err.message } };
}

/** A code's status and the message it carries when its factory has nothing more precise to say. */
export type CodeSpec = { readonly status: number; readonly message: string };

export type Catalogue<T extends Record<string, CodeSpec> = Record<string, CodeSpec>> = {
  readonly codes: T;
  /** The error of a code of this catalogue, with its status and its default message unless given another. */
  error(code: keyof T & string, message?: string, headers?: Record<string, string>): ApiError;
};

/**
 * A catalogue: its codes, their statuses and default messages. The factories an area throws are written on
 * top of `error`, so a code, its status and its message are each spelled once.
 */
// Every catalogued code's status, filled as each catalogue is defined: once the areas are loaded (before any
// route is registered), the OpenAPI documents read the status of each code a route lists from here.
const statusByCode = new Map<string, number>();

/** The status a catalogued code answers with (undefined for a code no loaded catalogue holds). */
export function catalogueStatus(code: string): number | undefined {
  return statusByCode.get(code);
}

export function defineCatalogue<const T extends Record<string, CodeSpec>>(codes: T): Catalogue<T> {
  for (const [code, spec] of Object.entries(codes)) statusByCode.set(code, spec.status);
  return {
    codes,
    error: (code, message, headers) =>
      new ApiError(code, codes[code].status, message ?? codes[code].message, headers),
  };
}

/** `{ CODE: status }` of a catalogue, the shape catalogues add to `ErrorCodes`. */
export type StatusesOf<C extends Catalogue> = { [K in keyof C['codes']]: C['codes'][K]['status'] };

export const sharedCatalogue = defineCatalogue({
  VALIDATION_ERROR: { status: 400, message: 'The request is not valid.' },
  // The error handler keeps the framework's own 4xx status for what it has no better code for.
  BAD_REQUEST: { status: 400, message: 'Bad request.' },
  INVALID_CURSOR: { status: 400, message: 'The cursor is not valid; start again without one.' },
  // The framework's own refusals (http/framework-errors.ts), in the same envelope.
  BAD_URL: { status: 400, message: 'The path is not valid: a percent-escape does not decode to UTF-8 text.' },
  IDEMPOTENCY_STREAM_UNSUPPORTED: {
    status: 400,
    message:
      'Idempotency-Key cannot be used with stream: true (a stream is not stored, so it cannot be replayed); send the key without stream, or stream without the key.',
  },
  AUTH_REQUIRED: { status: 401, message: 'A valid bearer credential is required.' },
  FORBIDDEN: { status: 403, message: 'Your role does not allow this.' },
  PLATFORM_SCOPE_DENIED: { status: 403, message: 'This platform credential lacks the scope.' },
  NOT_FOUND: { status: 404, message: 'Not found.' },
  FUNCTION_NOT_FOUND: { status: 404, message: 'No function has that name.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Use POST for function calls.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time.' },
  IDEMPOTENCY_CONFLICT: {
    status: 409,
    message: 'This Idempotency-Key was already used with a different request body; use a new key.',
  },
  IDEMPOTENCY_IN_PROGRESS: {
    status: 409,
    message: 'A request with this Idempotency-Key is still being processed; retry shortly.',
  },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  URI_TOO_LONG: { status: 414, message: 'A path parameter is longer than any this API accepts.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Send the body as application/json.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large.' },
  INTERNAL: { status: 500, message: 'An internal error occurred.' },
  NOT_READY: { status: 503, message: 'The database is not reachable.' },
  SHUTTING_DOWN: { status: 503, message: 'This node is shutting down; retry the request.' },
});

/**
 * Every catalogued code and its status. Each catalogue adds its own with `declare module` (see
 * `src/areas/cdn/errors.ts`), so the transports type a route's `errors` and the generic factories type
 * their code without importing any area.
 */
export interface ErrorCodes extends StatusesOf<typeof sharedCatalogue> {}
export type ErrorCode = keyof ErrorCodes & string;
/** The catalogued codes whose status is S: what `notFound`, `conflict` and `unavailable` accept. */
export type CodeWithStatus<S extends number> = {
  [K in ErrorCode]: ErrorCodes[K] extends S ? K : never;
}[ErrorCode];

const shared = sharedCatalogue.error;

export const errors = {
  validation: (message: string) => shared('VALIDATION_ERROR', message),
  authRequired: (message?: string) => shared('AUTH_REQUIRED', message),
  forbidden: (message?: string) => shared('FORBIDDEN', message),
  scopeDenied: (scope: string) =>
    shared('PLATFORM_SCOPE_DENIED', `This platform credential lacks the '${scope}' scope.`),
  notFound: (code: CodeWithStatus<404>, what: string) => new ApiError(code, 404, `${what} was not found.`),
  methodNotAllowed: (message?: string) => shared('METHOD_NOT_ALLOWED', message),
  conflict: (code: CodeWithStatus<409>, message: string) => new ApiError(code, 409, message),
  tooLarge: (message?: string) => shared('PAYLOAD_TOO_LARGE', message),
  unsupportedMediaType: () => shared('UNSUPPORTED_MEDIA_TYPE'),
  badUrl: () => shared('BAD_URL'),
  uriTooLong: () => shared('URI_TOO_LONG'),
  requestTimeout: () => shared('REQUEST_TIMEOUT', undefined, { connection: 'close' }),
  headersTooLarge: () => shared('HEADERS_TOO_LARGE', undefined, { connection: 'close' }),
  /** What Node's HTTP parser refuses: the framework's own 400 with no better code. */
  badRequest: (message?: string) => shared('BAD_REQUEST', message),
  rateLimited: (retryAfterSec: number) =>
    shared('RATE_LIMITED', `Too many requests; retry in ${retryAfterSec} s.`, {
      'retry-after': String(retryAfterSec),
    }),
  internal: () => shared('INTERNAL'),
  unavailable: (code: CodeWithStatus<503>, message: string) => new ApiError(code, 503, message),
  shuttingDown: () => shared('SHUTTING_DOWN', undefined, { connection: 'close' }),

  // function API
  functionNotFound: (name: string) => shared('FUNCTION_NOT_FOUND', `No function is named '${name}'.`),
  // v1 common ground (API keys, idempotency, pagination)
  apiKeyRequired: () =>
    shared('FORBIDDEN', 'The v1 API takes an API key (sk_live.… or sk_test.…), not this credential.'),
  idempotencyConflict: () => shared('IDEMPOTENCY_CONFLICT'),
  idempotencyInProgress: () => shared('IDEMPOTENCY_IN_PROGRESS'),
  idempotencyWithStream: () => shared('IDEMPOTENCY_STREAM_UNSUPPORTED'),
  invalidIdempotencyKey: () =>
    shared('VALIDATION_ERROR', 'Idempotency-Key must be 1–255 printable ASCII characters.'),
  invalidCursor: () => shared('INVALID_CURSOR'),
} as const;
