import { defineCatalogue, type StatusesOf } from '../errors.ts';

// The codes of outbound fetches (the SSRF guard). The target is the caller's input (400); failures of a
// reachable upstream are gateway errors (502/504).

export const fetchCatalogue = defineCatalogue({
  URL_NOT_ALLOWED: { status: 400, message: 'Pier does not fetch that address.' },
  FETCH_FAILED: { status: 502, message: 'Fetching from the remote server failed.' },
  RESPONSE_TOO_LARGE: { status: 502, message: 'The remote response is larger than allowed.' },
  TOO_MANY_REDIRECTS: { status: 502, message: 'The remote server redirected too many times.' },
  FETCH_TIMEOUT: { status: 504, message: 'The remote server did not answer in time.' },
});

declare module '../errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof fetchCatalogue> {}
}

const error = fetchCatalogue.error;

export const fetchErrors = {
  urlNotAllowed: (host: string, why: string) =>
    error('URL_NOT_ALLOWED', `Pier does not fetch '${host}': ${why}.`),
  fetchFailed: (host: string, why: string) =>
    error('FETCH_FAILED', `Fetching from '${host}' failed: ${why}.`),
  fetchTimeout: (ms: number) => error('FETCH_TIMEOUT', `The remote server did not answer within ${ms} ms.`),
  responseTooLarge: (maxBytes: number) =>
    error('RESPONSE_TOO_LARGE', `The remote response is larger than the ${maxBytes} bytes allowed.`),
  tooManyRedirects: (max: number) =>
    error('TOO_MANY_REDIRECTS', `The remote server redirected more than ${max} times.`),
} as const;
