import { defineCatalogue, type StatusesOf } from '../errors.ts';

// The codes of the Chromium pool and of rendering a page in it.

export const browserCatalogue = defineCatalogue({
  PAGE_CRASHED: { status: 502, message: 'The browser tab crashed while rendering the page.' },
  PAGE_FAILED: { status: 502, message: 'The page could not be loaded.' },
  BROWSER_UNAVAILABLE: { status: 503, message: 'The browser could not be started.' },
  PAGE_TIMEOUT: { status: 504, message: 'The page did not finish in time.' },
});

declare module '../errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof browserCatalogue> {}
}

const error = browserCatalogue.error;

export const browserErrors = {
  browserUnavailable: (why: string) =>
    error('BROWSER_UNAVAILABLE', `The browser could not be started: ${why}.`),
  browserClosed: () => error('BROWSER_UNAVAILABLE', 'The browser pool is shutting down.'),
  pageTimeout: (ms: number) => error('PAGE_TIMEOUT', `The page did not finish within ${ms} ms.`),
  pageCrashed: () => error('PAGE_CRASHED'),
  pageFailed: (why: string) => error('PAGE_FAILED', why),
} as const;
