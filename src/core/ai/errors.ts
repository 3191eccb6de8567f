import { ApiError, defineCatalogue, type StatusesOf } from '../errors.ts';

// The codes of the model providers (src/core/ai) and the model proxy built on them.

export const modelCatalogue = defineCatalogue({
  INVALID_MODEL: { status: 400, message: 'The model name is not valid.' },
  MODEL_CAPABILITY_UNSUPPORTED: { status: 400, message: 'The provider does not offer this.' },
  // 502 when the provider refused Pier's key (401 or 403): the caller's request was not the problem.
  MODEL_PROVIDER_REJECTED: { status: 400, message: 'The model provider refused the request.' },
  MODEL_NOT_AVAILABLE: { status: 404, message: 'No provider with a key serves the model.' },
  MODEL_PROVIDER_RATE_LIMITED: { status: 429, message: 'The model provider is rate limiting requests.' },
  MODEL_PROVIDER_ERROR: { status: 502, message: 'The model provider failed after retries.' },
  MODEL_PROVIDER_UNAVAILABLE: { status: 503, message: 'The model provider could not be reached.' },
});

declare module '../errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof modelCatalogue> {}
}

const error = modelCatalogue.error;

export const modelErrors = {
  modelNotAvailable: (model: string) =>
    error('MODEL_NOT_AVAILABLE', `No provider with a key serves the model '${model}' for this organization.`),
  invalidModel: (message: string) => error('INVALID_MODEL', message),
  modelCapabilityUnsupported: (provider: string, what: string) =>
    error('MODEL_CAPABILITY_UNSUPPORTED', `The provider '${provider}' does not offer ${what}.`),
  modelProviderRateLimited: (provider: string, retryAfterSec: number) =>
    error(
      'MODEL_PROVIDER_RATE_LIMITED',
      `The model provider '${provider}' is rate limiting requests; retry in ${retryAfterSec} s.`,
      { 'retry-after': String(retryAfterSec) },
    ),
  modelProviderError: (provider: string, status: number | undefined) =>
    error(
      'MODEL_PROVIDER_ERROR',
      `The model provider '${provider}' failed${status ? ` with HTTP ${status}` : ''} after retries.`,
    ),
  modelProviderRejected: (provider: string, status: number, detail: string) =>
    new ApiError(
      'MODEL_PROVIDER_REJECTED',
      status === 401 || status === 403 ? 502 : 400,
      `The model provider '${provider}' refused the request (HTTP ${status}): ${detail}`,
    ),
  modelProviderUnavailable: (provider: string) =>
    error('MODEL_PROVIDER_UNAVAILABLE', `The model provider '${provider}' could not be reached.`),
} as const;
