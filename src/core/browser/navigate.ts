import type { Page } from 'playwright-core';
import { ApiError, errors } from '../errors.ts';
import { fetchErrors } from '../net/errors.ts';
import { browserErrors } from './errors.ts';
import type { GuardLog } from './guard.ts';

// Loading a page in a guarded context and waiting for what the caller asked, with failures a person can
// read: the guard's own reason when it refused or could not fetch the document, the HTTP status when the
// site answered with an error.

export type WaitOptions = {
  /** CSS selector that must be present before the page counts as loaded. */
  waitForSelector?: string;
  /** Extra time (ms) after load, for late scripts and animations. */
  waitForTimeout?: number;
  /** How long waitForSelector may wait (default 10 s). */
  selectorTimeoutMs?: number;
  /** An HTTP error status fails the load (default); false hands it back in `status`. */
  rejectHttpErrors?: boolean;
};

export type Navigation = { status: number; finalUrl: string };

export async function navigate(
  page: Page,
  log: GuardLog,
  url: string,
  o: WaitOptions = {},
): Promise<Navigation> {
  // Chromium's router sees http(s) only: file:, data:, chrome: and the like never reach it, so they are
  // refused here before the browser is asked to go anywhere.
  if (!/^https?:\/\//i.test(url)) {
    throw fetchErrors.urlNotAllowed(url.split(':')[0]!.slice(0, 20), 'only http and https URLs are fetched');
  }
  let target = url;
  let response: Awaited<ReturnType<Page['goto']>> = null;
  // The guard follows redirects itself and sends the main frame to the final URL once (guard.ts).
  for (let hop = 0; ; hop++) {
    log.redirected = undefined;
    log.mainError = undefined;
    try {
      response = await page.goto(target, { waitUntil: 'load', timeout: 0 });
      break;
    } catch (err) {
      const redirected = log.redirected as GuardLog['redirected'];
      if (hop === 0 && redirected?.from === target) {
        target = redirected.to;
        continue;
      }
      throw navigationError(target, log, err);
    }
  }
  const status = response?.status() ?? 0;
  if (status >= 400 && o.rejectHttpErrors !== false)
    throw browserErrors.pageFailed(`The page answered with HTTP status ${status}.`);
  if (o.waitForSelector) {
    const timeout = o.selectorTimeoutMs ?? 10_000;
    try {
      await page.waitForSelector(o.waitForSelector, { state: 'attached', timeout });
    } catch (err) {
      if (
        err instanceof Error &&
        /Unexpected token|not a valid selector|selector/i.test(err.message) &&
        !/Timeout/i.test(err.message)
      ) {
        throw errors.validation(`waitForSelector '${o.waitForSelector}' is not a valid CSS selector.`);
      }
      throw browserErrors.pageFailed(
        `The selector '${o.waitForSelector}' did not appear within ${timeout} ms.`,
      );
    }
  }
  if (o.waitForTimeout) await page.waitForTimeout(o.waitForTimeout);
  return { status, finalUrl: page.url() };
}

function navigationError(url: string, log: GuardLog, err: unknown): ApiError {
  if (log.mainError) return log.mainError;
  if (err instanceof ApiError) return err;
  const msg = String((err as Error)?.message ?? err);
  if (/ERR_INVALID_URL|Cannot navigate to invalid URL/i.test(msg)) {
    return fetchErrors.urlNotAllowed(url.slice(0, 100), 'it is not a valid URL');
  }
  return browserErrors.pageFailed(
    `The page could not be loaded (${msg
      .split('\n')[0]!
      .replace(/^page\.goto: /, '')
      .slice(0, 120)}).`,
  );
}
