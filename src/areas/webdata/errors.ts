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
