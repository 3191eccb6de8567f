import { ApiError } from '../../core/errors.ts';
import { type SafeResponse, safeFetch } from '../../core/net/safe-fetch.ts';
import type { Deps } from '../../deps.ts';
import { parseDocument, visibleText } from './content.ts';
import { type PageFailureCode, webdataErrors } from './errors.ts';
import { type RenderedPage, type RenderOptions, rendererOf } from './plugins.ts';

// Getting a page for web data: a plain fetch through the SSRF guard first, and the browser (an injected
// PageRenderer) when the caller asked to wait for something or the fetched page needs JavaScript to show
// its content (needsJavaScript below, documented in docs/webdata.md). Every failure becomes a PageFailure
// whose message a person understands; it is stored in the resource's `error`.

export const USER_AGENT = 'Mozilla/5.0 (compatible; PierBot/1.0; +https://github.com/pier)';
const PAGE_MAX_BYTES = 15 * 1024 * 1024;

export class PageFailure extends Error {
  readonly code: PageFailureCode;
  /** The guard's own error when that is what failed (a blocked address answers with it: a 400). */
  readonly apiError?: ApiError;
  constructor(message: string, code: PageFailureCode = 'PAGE_UNUSABLE', apiError?: ApiError) {
    super(message);
    this.code = code;
    this.apiError = apiError;
  }
}

/** The site answered an error status: a page failure that keeps the status for the record. */
export class HttpFailure extends PageFailure {
  readonly status: number;
  constructor(status: number, what: 'page' | 'document' = 'page') {
    super(`HTTP status: the ${what} answered ${status}.`, 'REMOTE_HTTP_ERROR');
    this.status = status;
  }
}

const GUARD_CODES: Record<string, PageFailureCode> = {
  URL_NOT_ALLOWED: 'URL_NOT_ALLOWED',
  FETCH_TIMEOUT: 'REMOTE_TIMEOUT',
  RESPONSE_TOO_LARGE: 'REMOTE_TOO_LARGE',
  TOO_MANY_REDIRECTS: 'REMOTE_TOO_MANY_REDIRECTS',
  FETCH_FAILED: 'REMOTE_UNREACHABLE',
};

/** The code a failure is stored and answered with (the same for records and in-request answers). */
export function failureCode(err: unknown): PageFailureCode {
  if (err instanceof PageFailure) return err.code;
  if (err instanceof ApiError) return GUARD_CODES[err.code] ?? 'PAGE_UNUSABLE';
  return 'PAGE_UNUSABLE';
}

/**
 * For operations answered in the request (map, documents): a blocked address is the guard's 400; every
 * other failure of the remote side a 422 with its code and the same words a failed extraction stores.
 */
export function asApiError(err: unknown): unknown {
  if (!(err instanceof PageFailure) && !(err instanceof ApiError && err.code in GUARD_CODES)) return err;
  const code = failureCode(err);
  if (code === 'URL_NOT_ALLOWED') return err instanceof PageFailure ? (err.apiError ?? err) : err;
  return webdataErrors.pageFailed(code, describeFetchError(err));
}

export type FetchedPage = RenderedPage & { fetchedWith: 'fetch' | 'browser' };

export type PageOptions = RenderOptions;

/** A plain guarded GET; guard and network errors become PageFailures with a human reason. */
export async function fetchRaw(
  deps: Deps,
  url: string,
  opts: { signal?: AbortSignal; accept?: string; timeoutMs?: number; maxBytes?: number } = {},
): Promise<SafeResponse> {
  try {
    return await safeFetch(url, {
      outboundAllow: deps.config.outboundAllow,
      timeoutMs: opts.timeoutMs ?? deps.config.webdata.fetchTimeoutMs,
      maxBytes: opts.maxBytes ?? PAGE_MAX_BYTES,
      signal: opts.signal,
      headers: {
        'user-agent': USER_AGENT,
        accept: opts.accept ?? 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
      },
    });
  } catch (err) {
    throw new PageFailure(
      describeFetchError(err),
      failureCode(err),
      err instanceof ApiError ? err : undefined,
    );
  }
}

export function describeFetchError(err: unknown): string {
  if (err instanceof PageFailure) return err.message;
  if (!(err instanceof ApiError)) return 'The page could not be fetched.';
  switch (err.code) {
    case 'URL_NOT_ALLOWED':
      return `Blocked address: ${err.message}`;
    case 'FETCH_TIMEOUT':
      return `Timeout: ${err.message}`;
    case 'TOO_MANY_REDIRECTS':
      return `Too many redirects: ${err.message}`;
    case 'RESPONSE_TOO_LARGE':
      return `Too large: ${err.message}`;
    case 'FETCH_FAILED':
      return /does not resolve/.test(err.message) ? `DNS failure: ${err.message}` : err.message;
    default:
      return err.message;
  }
}

export function isHtml(res: SafeResponse): boolean {
  const type = (res.headers.get('content-type') ?? '').toLowerCase();
  if (type.includes('html') || type.includes('xml+xhtml')) return true;
  if (type && !type.startsWith('text/plain')) return false;
  // No or a generic type: look at the bytes (binary garbage has NULs or mostly non-text).
  const head = res.body.subarray(0, 2048).toString('latin1');
  return !head.includes('\0') && /<(!doctype html|html|head|body)\b/i.test(head);
}

/** The page's HTML, rendered in the browser when asked or needed. */
export async function getPage(deps: Deps, url: string, opts: PageOptions = {}): Promise<FetchedPage> {
  const wantsBrowser = Boolean(opts.waitForSelector) || Boolean(opts.waitForTimeout);
  if (wantsBrowser) return render(deps, url, opts, 'waitForSelector or waitForTimeout was given');
  if (opts.actions?.length) return render(deps, url, opts, 'actions were given');
  if (opts.screenshot) return render(deps, url, opts, 'a screenshot was asked for');
  const res = await fetchRaw(deps, url, { signal: opts.signal });
  if (res.status >= 400) throw new HttpFailure(res.status);
  if (!isHtml(res)) {
    const type = res.headers.get('content-type') || 'unknown';
    throw new PageFailure(
      `Not HTML: the page is ${type.split(';')[0]} (use /webdata/documents for PDF or DOCX).`,
    );
  }
  const html = res.text();
  if (needsJavaScript(html))
    return render(deps, res.url, opts, 'the page needs JavaScript to show its content');
  return { html, finalUrl: res.url, status: res.status, fetchedWith: 'fetch' };
}

async function render(deps: Deps, url: string, opts: PageOptions, why: string): Promise<FetchedPage> {
  const renderer = rendererOf(deps);
  if (!renderer) {
    throw new PageFailure(`Needs a browser (${why}), and no browser is available on this server.`);
  }
  try {
    const page = await renderer.render(url, opts);
    if (page.status >= 400) throw new HttpFailure(page.status);
    return { ...page, fetchedWith: 'browser' };
  } catch (err) {
    throw new PageFailure(describeFetchError(err), failureCode(err));
  }
}

const APP_ROOT = /^(root|app|__next|__nuxt|svelte|main|application)$/i;

/**
 * A page needs JavaScript when its fetched HTML shows almost nothing without it: under 200 characters of
 * visible text while it carries scripts, and either a single empty application root (`<div id="root">`),
 * a `<noscript>` asking for JavaScript, or no text at all.
 */
export function needsJavaScript(html: string): boolean {
  const doc = parseDocument(html);
  const text = visibleText(doc);
  if (text.length >= 200) return false;
  const scripts = doc.querySelectorAll('script').length;
  if (scripts === 0) return false;
  const body = doc.querySelector('body');
  const kids = body
    ? [...body.children].filter((c) => !/^(SCRIPT|NOSCRIPT|STYLE|LINK)$/i.test(c.tagName))
    : [];
  const emptyRoot =
    kids.length === 1 && APP_ROOT.test(kids[0]!.getAttribute('id') ?? '') && !kids[0]!.textContent?.trim();
  const noscript = [...doc.querySelectorAll('noscript')].some((n) => /javascript/i.test(n.textContent ?? ''));
  return emptyRoot || noscript || text.length === 0;
}
