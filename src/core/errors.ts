// The one catalogue of error codes. Services throw these; one Fastify handler renders the envelope.

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

export const errors = {
  // shared
  validation: (message: string) => new ApiError('VALIDATION_ERROR', 400, message),
  authRequired: (message = 'A valid bearer credential is required.') =>
    new ApiError('AUTH_REQUIRED', 401, message),
  forbidden: (message = 'Your role does not allow this.') => new ApiError('FORBIDDEN', 403, message),
  scopeDenied: (scope: string) =>
    new ApiError('PLATFORM_SCOPE_DENIED', 403, `This platform credential lacks the '${scope}' scope.`),
  notFound: (code: string, what: string) => new ApiError(code, 404, `${what} was not found.`),
  methodNotAllowed: () => new ApiError('METHOD_NOT_ALLOWED', 405, 'Use POST for function calls.'),
  conflict: (code: string, message: string) => new ApiError(code, 409, message),
  tooLarge: (message = 'The request body is too large.') => new ApiError('PAYLOAD_TOO_LARGE', 413, message),
  unsupportedMediaType: () =>
    new ApiError('UNSUPPORTED_MEDIA_TYPE', 415, 'Send the body as application/json.'),
  rateLimited: (retryAfterSec: number) =>
    new ApiError('RATE_LIMITED', 429, `Too many requests; retry in ${retryAfterSec} s.`, {
      'retry-after': String(retryAfterSec),
    }),
  internal: () => new ApiError('INTERNAL', 500, 'An internal error occurred.'),
  unavailable: (code: string, message: string) => new ApiError(code, 503, message),
  shuttingDown: () =>
    new ApiError('SHUTTING_DOWN', 503, 'This node is shutting down; retry the request.', {
      connection: 'close',
    }),

  // function API
  functionNotFound: (name: string) =>
    new ApiError('FUNCTION_NOT_FOUND', 404, `No function is named '${name}'.`),
  codeInvalid: () => new ApiError('CODE_INVALID', 400, 'That login code is not valid.'),
  codeUsed: () => new ApiError('CODE_USED', 400, 'That login code has already been used.'),
  codeExpired: () => new ApiError('CODE_EXPIRED', 400, 'That login code has expired; mint a new one.'),
  codeVerifierMismatch: () =>
    new ApiError(
      'CODE_INVALID',
      400,
      'That login code needs the code verifier of the login that asked for it.',
    ),
  orgNotFound: (slug?: string) =>
    new ApiError(
      'ORG_NOT_FOUND',
      404,
      slug ? `Organization '${slug}' was not found.` : 'Organization not found.',
    ),
  projectNotFound: (slug?: string) =>
    new ApiError('PROJECT_NOT_FOUND', 404, slug ? `Project '${slug}' was not found.` : 'Project not found.'),
  userNotFound: (email?: string) =>
    new ApiError('USER_NOT_FOUND', 404, email ? `No user has the e-mail ${email}.` : 'User not found.'),
  credentialNotFound: () => new ApiError('CREDENTIAL_NOT_FOUND', 404, 'Credential not found.'),
  slugTaken: (slug: string) => new ApiError('SLUG_TAKEN', 409, `The slug '${slug}' is already taken.`),
  invalidSlug: (slug: string) =>
    new ApiError(
      'INVALID_SLUG',
      400,
      `'${slug}' is not a valid slug: use 3–40 characters of a-z, 0-9 and -.`,
    ),
  invalidRegion: (region: string, regions: string[]) =>
    new ApiError(
      'INVALID_REGION',
      400,
      `Region '${region}' is not offered; choose one of ${regions.join(', ')}.`,
    ),
  invalidKey: () => new ApiError('INVALID_KEY', 400, 'Secret keys must match ^[A-Z][A-Z0-9_]*$.'),
  protectedKey: (key: string) =>
    new ApiError('PROTECTED_KEY', 400, `The key '${key}' is reserved by the platform.`),
  invalidValue: () => new ApiError('INVALID_VALUE', 400, 'Secret values must be 1 to 65536 bytes.'),
  quotaExceeded: (message: string) => new ApiError('QUOTA_EXCEEDED', 400, message),
  lastOwner: () =>
    new ApiError('LAST_OWNER', 409, 'An organization needs at least one owner; promote someone else first.'),

  // infra: blobs (presigned URLs served by Pier) and outbound fetch (SSRF guard)
  invalidBlobKey: () =>
    new ApiError(
      'INVALID_BLOB_KEY',
      400,
      'Blob keys are 1–512 characters of A-Z, a-z, 0-9, ., _, - and / with no empty, . or .. segment.',
    ),
  blobNotFound: () => new ApiError('BLOB_NOT_FOUND', 404, 'Blob was not found.'),
  blobKeyConflict: () =>
    new ApiError('BLOB_KEY_CONFLICT', 409, 'That key collides with an existing key used as a folder.'),
  signatureInvalid: (message = 'The URL signature is missing or invalid.') =>
    new ApiError('SIGNATURE_INVALID', 403, message),
  urlExpired: () => new ApiError('URL_EXPIRED', 403, 'This signed URL has expired; ask for a new one.'),
  rangeNotSatisfiable: (size: number) =>
    new ApiError('RANGE_NOT_SATISFIABLE', 416, 'The requested range is outside the object.', {
      'content-range': `bytes */${size}`,
    }),
  // v1 common ground (API keys, idempotency, pagination)
  apiKeyNotFound: (keyId?: string) =>
    new ApiError(
      'API_KEY_NOT_FOUND',
      404,
      keyId ? `API key '${keyId}' was not found.` : 'API key not found.',
    ),
  apiKeyRequired: () =>
    new ApiError(
      'FORBIDDEN',
      403,
      'The v1 API takes an API key (sk_live.… or sk_test.…), not this credential.',
    ),
  idempotencyConflict: () =>
    new ApiError(
      'IDEMPOTENCY_CONFLICT',
      409,
      'This Idempotency-Key was already used with a different request body; use a new key.',
    ),
  idempotencyInProgress: () =>
    new ApiError(
      'IDEMPOTENCY_IN_PROGRESS',
      409,
      'A request with this Idempotency-Key is still being processed; retry shortly.',
    ),
  idempotencyWithStream: () =>
    new ApiError(
      'IDEMPOTENCY_STREAM_UNSUPPORTED',
      400,
      'Idempotency-Key cannot be used with stream: true (a stream is not stored, so it cannot be replayed); send the key without stream, or stream without the key.',
    ),
  invalidIdempotencyKey: () =>
    new ApiError('VALIDATION_ERROR', 400, 'Idempotency-Key must be 1–255 printable ASCII characters.'),
  invalidCursor: () =>
    new ApiError('INVALID_CURSOR', 400, 'The cursor is not valid; start again without one.'),
  // The target is the caller's input (400); failures of a reachable upstream are gateway errors (502/504).
  urlNotAllowed: (host: string, why: string) =>
    new ApiError('URL_NOT_ALLOWED', 400, `Pier does not fetch '${host}': ${why}.`),
  fetchFailed: (host: string, why: string) =>
    new ApiError('FETCH_FAILED', 502, `Fetching from '${host}' failed: ${why}.`),
  fetchTimeout: (ms: number) =>
    new ApiError('FETCH_TIMEOUT', 504, `The remote server did not answer within ${ms} ms.`),
  responseTooLarge: (maxBytes: number) =>
    new ApiError(
      'RESPONSE_TOO_LARGE',
      502,
      `The remote response is larger than the ${maxBytes} bytes allowed.`,
    ),
  tooManyRedirects: (max: number) =>
    new ApiError('TOO_MANY_REDIRECTS', 502, `The remote server redirected more than ${max} times.`),
  // models (src/core/ai, the model proxy)
  modelNotAvailable: (model: string) =>
    new ApiError(
      'MODEL_NOT_AVAILABLE',
      404,
      `No provider with a key serves the model '${model}' for this organization.`,
    ),
  invalidModel: (message: string) => new ApiError('INVALID_MODEL', 400, message),
  modelCapabilityUnsupported: (provider: string, what: string) =>
    new ApiError('MODEL_CAPABILITY_UNSUPPORTED', 400, `The provider '${provider}' does not offer ${what}.`),
  modelProviderRateLimited: (provider: string, retryAfterSec: number) =>
    new ApiError(
      'MODEL_PROVIDER_RATE_LIMITED',
      429,
      `The model provider '${provider}' is rate limiting requests; retry in ${retryAfterSec} s.`,
      { 'retry-after': String(retryAfterSec) },
    ),
  modelProviderError: (provider: string, status: number | undefined) =>
    new ApiError(
      'MODEL_PROVIDER_ERROR',
      502,
      `The model provider '${provider}' failed${status ? ` with HTTP ${status}` : ''} after retries.`,
    ),
  modelProviderRejected: (provider: string, status: number, detail: string) =>
    new ApiError(
      'MODEL_PROVIDER_REJECTED',
      status === 401 || status === 403 ? 502 : 400,
      `The model provider '${provider}' refused the request (HTTP ${status}): ${detail}`,
    ),
  modelProviderUnavailable: (provider: string) =>
    new ApiError('MODEL_PROVIDER_UNAVAILABLE', 503, `The model provider '${provider}' could not be reached.`),
  embeddingModelUnavailable: (model: string, why: 'no provider key' | 'no embeddings' | 'key refused') =>
    new ApiError(
      'EMBEDDING_MODEL_UNAVAILABLE',
      503,
      why === 'no embeddings'
        ? `The embedding model '${model}' (EMBEDDING_MODEL) is served by a provider without embeddings: set EMBEDDING_MODEL to an embedding model, or unset it to use the built-in embedder.`
        : why === 'key refused'
          ? `The provider of the embedding model '${model}' (EMBEDDING_MODEL) refused its key: replace the organization's key (setModelProviderKeyForCli) or the platform's key, or unset EMBEDDING_MODEL to use the built-in embedder.`
          : `The embedding model '${model}' (EMBEDDING_MODEL) has no provider key: store the organization's key (setModelProviderKeyForCli), set the platform's key (e.g. OPENAI_API_KEY, or PIER_MODELS_URL for pier/ models), or unset EMBEDDING_MODEL to use the built-in embedder.`,
    ),
  embedderDimensionMismatch: (recorded: number, given: number, model: string) =>
    new ApiError(
      'EMBEDDER_DIMENSION_MISMATCH',
      409,
      `This installation stores ${recorded}-dimension vectors; '${model}' makes ${given}. Re-embed to switch.`,
    ),
  // dashboard: sessions, passwords, members, tokens
  signInFailed: () => new ApiError('SIGNIN_FAILED', 401, 'The e-mail or password is not right.'),
  signUpDisabled: () => new ApiError('SIGNUP_DISABLED', 403, 'Sign-up is turned off on this Pier.'),
  signUpFailed: () =>
    new ApiError('SIGNUP_FAILED', 409, 'An account could not be created with that e-mail; try signing in.'),
  weakPassword: () => new ApiError('WEAK_PASSWORD', 400, 'Passwords need 10 to 200 characters.'),
  csrfInvalid: () =>
    new ApiError('CSRF_INVALID', 403, 'This request needs the x-csrf-token header of your session.'),
  linkInvalid: () => new ApiError('LINK_INVALID', 400, 'That link is not valid any more; ask for a new one.'),
  memberNotFound: () => new ApiError('MEMBER_NOT_FOUND', 404, 'That member was not found.'),
  emailNotVerified: () =>
    new ApiError(
      'EMAIL_NOT_VERIFIED',
      403,
      'Verify your e-mail address first: open the link Pier sent you, or ask for a new one.',
    ),
  verifyOtherAccount: () =>
    new ApiError(
      'LINK_INVALID',
      400,
      'This link verifies another account: sign in as the account that asked for it, then open it again.',
    ),
  // v1 memory
  vectorExtensionMissing: () =>
    new ApiError(
      'VECTOR_EXTENSION_MISSING',
      503,
      "Memory needs the PostgreSQL 'vector' extension (pgvector): install it on the database server and restart Pier, or run Pier on its embedded database (no DATABASE_URL).",
    ),
  agentNotFound: () => new ApiError('AGENT_NOT_FOUND', 404, 'Agent not found.'),
  memoryNotFound: () => new ApiError('MEMORY_NOT_FOUND', 404, 'Memory not found.'),
  collectionNotFound: () => new ApiError('COLLECTION_NOT_FOUND', 404, 'Collection not found.'),
  compactionJobNotFound: () => new ApiError('COMPACTION_JOB_NOT_FOUND', 404, 'Compaction job not found.'),
  memoryDuplicate: () =>
    new ApiError(
      'MEMORY_DUPLICATE',
      409,
      'Another active memory of the same agent and collection already has this content.',
    ),

  // v1 mail
  emailNotFound: () => new ApiError('EMAIL_NOT_FOUND', 404, 'E-mail not found.'),
  emailNotCancellable: (status: string) =>
    new ApiError(
      'EMAIL_NOT_CANCELLABLE',
      409,
      `This e-mail is ${status}; only scheduled or queued e-mails can be cancelled.`,
    ),
  templateNotFound: () => new ApiError('TEMPLATE_NOT_FOUND', 404, 'Template not found.'),
  templateVariableMissing: (name: string) =>
    new ApiError('TEMPLATE_VARIABLE_MISSING', 400, `The template needs the variable '${name}'.`),
  suppressionNotFound: () =>
    new ApiError('SUPPRESSION_NOT_FOUND', 404, 'That address is not on the suppression list.'),
  senderDomainNotVerified: (domain: string) =>
    new ApiError(
      'SENDER_DOMAIN_NOT_VERIFIED',
      403,
      `The sender domain '${domain}' is not verified for this organization; add it with domains add and publish its DNS records, or send with a test key.`,
    ),
  unsubscribeTokenInvalid: () =>
    new ApiError(
      'UNSUBSCRIBE_TOKEN_INVALID',
      404,
      'This unsubscribe link is not valid; copy the whole link from the e-mail.',
    ),
  domainNotFound: () => new ApiError('DOMAIN_NOT_FOUND', 404, 'Sender domain not found.'),
  domainExists: (domain: string) =>
    new ApiError('DOMAIN_EXISTS', 409, `The domain '${domain}' is already added to this organization.`),
  domainInvalid: (domain: string) =>
    new ApiError('DOMAIN_INVALID', 400, `'${domain.slice(0, 100)}' is not a domain name Pier can send from.`),
  outboxMessageNotFound: () => new ApiError('OUTBOX_MESSAGE_NOT_FOUND', 404, 'Outbox message not found.'),

  // v1 integrations
  connectorNotFound: (slug: string) =>
    new ApiError('CONNECTOR_NOT_FOUND', 404, `No connector is named '${slug}'.`),
  connectorNotConfigured: (slug: string, envPrefix: string) =>
    new ApiError(
      'CONNECTOR_NOT_CONFIGURED',
      400,
      `The connector '${slug}' has no OAuth client on this Pier: the operator sets ${envPrefix}_CLIENT_ID and ${envPrefix}_CLIENT_SECRET.`,
    ),
  connectionNotFound: () => new ApiError('CONNECTION_NOT_FOUND', 404, 'Connection not found.'),
  connectionNotConnected: (status: string, reason: string | null) =>
    new ApiError(
      'CONNECTION_NOT_CONNECTED',
      409,
      `This connection is ${status}${reason ? ` (${reason})` : ''}; the end user must connect it again.`,
    ),
  operationNotSupported: (slug: string, category: string) =>
    new ApiError(
      'OPERATION_NOT_SUPPORTED',
      400,
      `The connector '${slug}' does not offer ${category} operations.`,
    ),
  oauthStateInvalid: () =>
    new ApiError(
      'OAUTH_STATE_INVALID',
      400,
      'This authorization link is not valid (unknown, already used or expired); start the connection again.',
    ),
  providerResourceNotFound: (slug: string, message: string) =>
    new ApiError('PROVIDER_RESOURCE_NOT_FOUND', 404, `${slug}: ${message}`),
  providerRejected: (slug: string, status: number, message: string) =>
    new ApiError('PROVIDER_REJECTED', 400, `${slug} refused the request (HTTP ${status}): ${message}`),
  providerForbidden: (slug: string, message: string) =>
    new ApiError(
      'PROVIDER_FORBIDDEN',
      403,
      `${slug} does not allow this for the connected account: ${message}`,
    ),
  providerRateLimited: (slug: string, retryAfterSec: number) =>
    new ApiError(
      'PROVIDER_RATE_LIMITED',
      429,
      `${slug} is rate limiting this connection; retry in ${retryAfterSec} s.`,
      { 'retry-after': String(retryAfterSec) },
    ),
  providerError: (slug: string, status: number | undefined, message: string) =>
    new ApiError('PROVIDER_ERROR', 502, `${slug} failed${status ? ` (HTTP ${status})` : ''}: ${message}`),
  passthroughPathInvalid: () =>
    new ApiError(
      'PASSTHROUGH_PATH_INVALID',
      400,
      "The path must be relative to the provider's API base: no scheme, host, '//' or '..'.",
    ),

  // hosting (deployments, runtime)
  artifactInvalid: (why: string) => new ApiError('ARTIFACT_INVALID', 400, why),
  artifactTooLarge: (maxBytes: number) =>
    new ApiError(
      'ARTIFACT_TOO_LARGE',
      413,
      `The artifact is larger than ${Math.round(maxBytes / 1024 / 1024)} MB; leave build outputs and caches out.`,
    ),
  artifactMissing: () =>
    new ApiError(
      'ARTIFACT_MISSING',
      400,
      'Nothing was uploaded for this deployment; PUT the artifact to uploadUrl first.',
    ),
  uploadExpired: () =>
    new ApiError(
      'UPLOAD_EXPIRED',
      400,
      'The upload URL of this deployment has expired; create a new deployment.',
    ),
  deploymentNotFound: (id?: string) =>
    new ApiError(
      'DEPLOYMENT_NOT_FOUND',
      404,
      id ? `Deployment '${id}' was not found.` : 'Deployment not found.',
    ),
  deploymentStarted: (status: string) =>
    new ApiError(
      'DEPLOYMENT_ALREADY_STARTED',
      409,
      `This deployment was already started (status ${status}).`,
    ),
  projectNotReady: (slug: string, status: string) =>
    new ApiError('PROJECT_NOT_READY', 409, `Project '${slug}' is ${status}, not ready for deployments.`),
  nothingToRestart: (slug: string) =>
    new ApiError(
      'NOTHING_TO_RESTART',
      409,
      `Project '${slug}' has no live or crashed deployment to restart; deploy it with 'pier deploy'.`,
    ),
  // CDN
  assetNotFound: () => new ApiError('ASSET_NOT_FOUND', 404, 'Asset not found.'),
  assetUploadExpired: () =>
    new ApiError('UPLOAD_EXPIRED', 400, 'The upload URL of this asset has expired; request a new upload.'),
  uploadAlreadyConfirmed: () =>
    new ApiError('UPLOAD_ALREADY_CONFIRMED', 409, 'This upload was already confirmed.'),
  uploadIncomplete: () =>
    new ApiError(
      'UPLOAD_INCOMPLETE',
      409,
      'Nothing was uploaded for this asset; PUT the file to uploadUrl first.',
    ),
  uploadTooLarge: (declared: number) =>
    new ApiError(
      'PAYLOAD_TOO_LARGE',
      413,
      `The uploaded file is larger than the ${declared} bytes declared; it was discarded.`,
    ),
  assetNotReady: (status: string) =>
    new ApiError(
      'ASSET_NOT_READY',
      409,
      `The asset is ${status}; only confirmed, decodable assets can be used.`,
    ),
  assetNotImage: () => new ApiError('ASSET_NOT_IMAGE', 400, 'Only image assets can be transformed.'),
  imageTooLarge: (maxPixels: number) =>
    new ApiError(
      'IMAGE_TOO_LARGE',
      413,
      `The image has more than ${maxPixels} pixels; it cannot be transformed.`,
    ),
  imageUndecodable: () => new ApiError('IMAGE_UNDECODABLE', 422, 'The image bytes could not be decoded.'),
  mergeJobNotFound: () => new ApiError('MERGE_JOB_NOT_FOUND', 404, 'Merge job not found.'),
  mergeNotCancellable: (status: string) =>
    new ApiError(
      'MERGE_NOT_CANCELLABLE',
      409,
      `The merge job is ${status}; only pending or processing jobs can be cancelled.`,
    ),
  mergeInputInvalid: (message: string) => new ApiError('MERGE_INPUT_INVALID', 400, message),
  // workflows
  workflowNotFound: () => new ApiError('WORKFLOW_NOT_FOUND', 404, 'Workflow not found.'),
  workflowRunNotFound: () => new ApiError('WORKFLOW_RUN_NOT_FOUND', 404, 'Workflow run not found.'),
  workflowInvalid: (problems: string[]) =>
    new ApiError(
      'WORKFLOW_INVALID',
      400,
      `The workflow has ${problems.length} problem(s): ${problems.join(' ')}`,
    ),
  workflowSlugTaken: (slug: string) =>
    new ApiError('WORKFLOW_SLUG_TAKEN', 409, `A workflow '${slug}' already exists in this project.`),
  workflowVariablesInvalid: (problems: string[]) =>
    new ApiError('WORKFLOW_VARIABLES_INVALID', 400, `Bad variables: ${problems.join(' ')}`),
  workflowRunNotCancellable: (status: string) =>
    new ApiError(
      'WORKFLOW_RUN_NOT_CANCELLABLE',
      409,
      `The run is ${status}; only pending or running runs can be cancelled.`,
    ),
  workflowRunNotRetryable: (status: string) =>
    new ApiError('WORKFLOW_RUN_NOT_RETRYABLE', 409, `The run is ${status}; only failed runs can be retried.`),
  // web data
  pageUnusable: (why: string) => new ApiError('PAGE_UNUSABLE', 422, why),
  documentUnsupported: (type: string) =>
    new ApiError(
      'DOCUMENT_UNSUPPORTED',
      422,
      `The file is ${type}, not a PDF or DOCX document; only those two are parsed.`,
    ),
  documentUnreadable: (kind: string) =>
    new ApiError(
      'DOCUMENT_UNREADABLE',
      422,
      `The ${kind} file could not be read; it may be damaged or encrypted.`,
    ),
  // the Chromium pool (src/core/browser) and web data screenshots
  browserUnavailable: (why: string) =>
    new ApiError('BROWSER_UNAVAILABLE', 503, `The browser could not be started: ${why}.`),
  browserClosed: () => new ApiError('BROWSER_UNAVAILABLE', 503, 'The browser pool is shutting down.'),
  pageTimeout: (ms: number) => new ApiError('PAGE_TIMEOUT', 504, `The page did not finish within ${ms} ms.`),
  pageCrashed: () => new ApiError('PAGE_CRASHED', 502, 'The browser tab crashed while rendering the page.'),
  pageFailed: (why: string) => new ApiError('PAGE_FAILED', 502, why),
  selectorNotFound: (selector: string) =>
    new ApiError('SELECTOR_NOT_FOUND', 422, `No element on the page matches the selector '${selector}'.`),
  screenshotNotFound: () => new ApiError('SCREENSHOT_NOT_FOUND', 404, 'Screenshot not found.'),
} as const;

export function errorBody(err: ApiError): ErrorBody {
  return { error: { code: err.code, message: err.message } };
}
