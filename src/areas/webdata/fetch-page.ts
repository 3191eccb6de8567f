import { ApiError } from '../../core/errors.ts';
import { type SafeResponse, safeFetch } from '../../core/net/safe-fetch.ts';
import type { Deps } from '../../deps.ts';
import { parseDocument, visibleText } from './content.ts';
import { webdataErrors } from './errors.ts';
import { type RenderedPage, type RenderOptions, rendererOf } from './plugins.ts';

// Getting a page for web data: a plain fetch through the SSRF guard first, and the browser (an injected
// PageRenderer) when the caller asked to wait for something or the fetched page needs JavaScript to show
// its content (needsJavaScript below, documented in docs/webdata.md). Every failure becomes a PageFailure
// whose message a person understands; it is stored in the resource's `error`.

export const USER_AGENT = 'Mozilla/5.0 (compatible; PierBot/1.0; +https://github.com/pier)';
const PAGE_MAX_BYTES = 15 * 1024 * 1024;

export class PageFailure extends Error {
  /** The guard's own error when that is what failed (synchronous operations answer with it). */
  readonly apiError?: ApiError;
  constructor(message: string, apiError?: ApiError) {
    super(message);
    this.apiError = apiError;
  }
}

/** For operations answered in the request (map, documents): the guard's error, else a 422. */
export function asApiError(err: unknown): unknown {
  if (err instanceof PageFailure) return err.apiError ?? webdataErrors.pageUnusable(err.message);
  return err;
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
    throw new PageFailure(describeFetchError(err), err instanceof ApiError ? err : undefined);
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
  if (res.status >= 400) throw new PageFailure(`HTTP status: the page answered ${res.status}.`);
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
    if (page.status >= 400) throw new PageFailure(`HTTP status: the page answered ${page.status}.`);
    return { ...page, fetchedWith: 'browser' };
  } catch (err) {
    throw new PageFailure(describeFetchError(err));
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
