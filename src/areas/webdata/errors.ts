import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of web data: pages and documents, extractions, crawls, batch jobs, schedules, screenshots. The
// browser's and outbound fetch's own codes are in src/core/browser/errors.ts and src/core/net/errors.ts.

export const webdataCatalogue = defineCatalogue({
  EXTRACTION_NOT_FOUND: { status: 404, message: 'Extraction was not found.' },
  CRAWL_NOT_FOUND: { status: 404, message: 'Crawl was not found.' },
  BATCH_NOT_FOUND: { status: 404, message: 'Batch job was not found.' },
  SCHEDULE_NOT_FOUND: { status: 404, message: 'Schedule was not found.' },
  SCREENSHOT_NOT_FOUND: { status: 404, message: 'Screenshot not found.' },
  CRAWL_NOT_CANCELLABLE: { status: 409, message: 'The crawl cannot be cancelled.' },
  BATCH_NOT_CANCELLABLE: { status: 409, message: 'The batch job cannot be cancelled.' },
  SCHEDULE_RUN_IN_PROGRESS: { status: 409, message: 'A run of this schedule is in progress.' },
  PAGE_UNUSABLE: { status: 422, message: 'The page has no content that can be used.' },
  // The remote site's failures: 422, not 502/504, because retrying the same request will most likely fail
  // the same way (a redirect loop, a page too large, a 404), and clients retry 5xx answers. The same codes
  // are stored on failed extractions (errorCode) and crawl pages (failedPages[].code).
  REMOTE_TIMEOUT: { status: 422, message: 'The site did not answer in time.' },
  REMOTE_TOO_LARGE: { status: 422, message: 'The remote file or page is larger than allowed.' },
  REMOTE_TOO_MANY_REDIRECTS: { status: 422, message: 'The site redirected too many times.' },
  REMOTE_UNREACHABLE: { status: 422, message: 'The site could not be reached.' },
  REMOTE_HTTP_ERROR: { status: 422, message: 'The site answered with an error status.' },
  DOCUMENT_UNSUPPORTED: { status: 422, message: 'Only PDF and DOCX documents are parsed.' },
  DOCUMENT_UNREADABLE: {
    status: 422,
    message: 'The file could not be read; it may be damaged or encrypted.',
  },
  SELECTOR_NOT_FOUND: { status: 422, message: 'No element on the page matches the selector.' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof webdataCatalogue> {}
}

const error = webdataCatalogue.error;

/** Codes a failed page carries (an extraction's errorCode, a crawl's failed page, an in-request 4xx). */
export type PageFailureCode =
  | 'URL_NOT_ALLOWED'
  | 'PAGE_UNUSABLE'
  | 'REMOTE_TIMEOUT'
  | 'REMOTE_TOO_LARGE'
  | 'REMOTE_TOO_MANY_REDIRECTS'
  | 'REMOTE_UNREACHABLE'
  | 'REMOTE_HTTP_ERROR';

export const webdataErrors = {
  extractionNotFound: () => error('EXTRACTION_NOT_FOUND'),
  crawlNotFound: () => error('CRAWL_NOT_FOUND'),
  crawlNotCancellable: (status: string) =>
    error('CRAWL_NOT_CANCELLABLE', `The crawl is ${status}; it cannot be cancelled.`),
  batchNotFound: () => error('BATCH_NOT_FOUND'),
  batchNotCancellable: (status: string) =>
    error('BATCH_NOT_CANCELLABLE', `The batch job is ${status}; it cannot be cancelled.`),
  scheduleNotFound: () => error('SCHEDULE_NOT_FOUND'),
  scheduleRunInProgress: () =>
    error(
      'SCHEDULE_RUN_IN_PROGRESS',
      'A run of this schedule is in progress; ask again when it has finished.',
    ),
  pageUnusable: (why: string) => error('PAGE_UNUSABLE', why),
  pageFailed: (code: Exclude<PageFailureCode, 'URL_NOT_ALLOWED'>, why: string) => error(code, why),
  documentUnsupported: (type: string) =>
    error(
      'DOCUMENT_UNSUPPORTED',
      `The file is ${type}, not a PDF or DOCX document; only those two are parsed.`,
    ),
  documentUnreadable: (kind: string) =>
    error('DOCUMENT_UNREADABLE', `The ${kind} file could not be read; it may be damaged or encrypted.`),
  selectorNotFound: (selector: string) =>
    error('SELECTOR_NOT_FOUND', `No element on the page matches the selector '${selector}'.`),
  screenshotNotFound: () => error('SCREENSHOT_NOT_FOUND'),
} as const;
