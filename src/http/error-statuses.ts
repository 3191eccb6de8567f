// The error codes answered with a status beyond the ones every v1 operation declares (400, 401, 403, 404,
// 409, 429), so an operation that lists such a code in its `errors` declares its status in the OpenAPI
// document too (status_code_conformance: a client or fuzzer reading the document is not surprised by a 422
// or a 502). The framework's own refusals (413, 414, 415, 405, 408, 431) are declared by openapi-errors.ts.
// error-statuses.test.ts holds this table to the error catalogues (src/areas/index.ts: errorCatalogues),
// which v1-kit.ts cannot import: the areas import v1-kit.

export const ERROR_STATUSES: Readonly<Record<string, number>> = {
  ARTIFACT_TOO_LARGE: 413,
  IMAGE_TOO_LARGE: 413,
  RANGE_NOT_SATISFIABLE: 416,
  DOCUMENT_UNREADABLE: 422,
  DOCUMENT_UNSUPPORTED: 422,
  IMAGE_UNDECODABLE: 422,
  PAGE_UNUSABLE: 422,
  SELECTOR_NOT_FOUND: 422,
  FETCH_FAILED: 502,
  MODEL_PROVIDER_ERROR: 502,
  PAGE_CRASHED: 502,
  PAGE_FAILED: 502,
  PROVIDER_ERROR: 502,
  RESPONSE_TOO_LARGE: 502,
  TOO_MANY_REDIRECTS: 502,
  BROWSER_UNAVAILABLE: 503,
  FFMPEG_UNAVAILABLE: 503,
  NOT_READY: 503,
  UPLOAD_FAILED: 503,
  EMBEDDING_MODEL_UNAVAILABLE: 503,
  MODEL_PROVIDER_UNAVAILABLE: 503,
  SHUTTING_DOWN: 503,
  VECTOR_EXTENSION_MISSING: 503,
  FETCH_TIMEOUT: 504,
  PAGE_TIMEOUT: 504,
};

/** Codes of the framework and the error handler, declared by openapi-errors.ts or by no operation. */
export const FRAMEWORK_CODES = new Set([
  'HEADERS_TOO_LARGE',
  'INTERNAL',
  'METHOD_NOT_ALLOWED',
  'PAYLOAD_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'UNSUPPORTED_MEDIA_TYPE',
  'URI_TOO_LONG',
]);

/** The statuses of `codes` beyond the shared ones. */
export function statusesOf(codes: readonly string[]): number[] {
  return codes.flatMap((c) => (ERROR_STATUSES[c] ? [ERROR_STATUSES[c]] : []));
}
