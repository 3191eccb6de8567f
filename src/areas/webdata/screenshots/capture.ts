import { devices, type Page } from 'playwright-core';
import sharp from 'sharp';
import { AD_SLOT_CSS, isAdRequest } from '../../../core/browser/adblock.ts';
import { type CookieBannerState, handleCookieBanners } from '../../../core/browser/cookie-banners.ts';
import { browserErrors } from '../../../core/browser/errors.ts';
import { navigate } from '../../../core/browser/navigate.ts';
import type { BrowserPool, PageOptions } from '../../../core/browser/pool.ts';
import { errors } from '../../../core/errors.ts';
import { webdataErrors } from '../errors.ts';
import type { ScreenshotOptions } from './schema.ts';

// One capture: a page in the shared pool (behind the SSRF guard), dressed as the device asked, loaded and
// waited for, then shot. webp is encoded by sharp from a lossless PNG (Chromium's screenshot API knows png
// and jpeg only); pdf is one page the size of what a screenshot would show.

/** Viewport, user agent, pixel ratio and touch of each device type (Playwright's device descriptors). */
export const DEVICE_PRESETS = {
  desktop: {
    viewport: { width: 1280, height: 800 },
    userAgent: devices['Desktop Chrome'].userAgent,
    deviceScaleFactor: 1,
    isMobile: false,
    hasTouch: false,
  },
  tablet: pick(devices['iPad (gen 7)']),
  mobile: pick(devices['iPhone 13']),
} as const;

function pick(d: (typeof devices)[string]) {
  return {
    viewport: d.viewport,
    userAgent: d.userAgent,
    deviceScaleFactor: d.deviceScaleFactor,
    isMobile: d.isMobile,
    hasTouch: d.hasTouch,
  };
}

/** Chromium's limit for one capture, in device px per side: a full page taller than this is cut. */
export const MAX_CAPTURE_DEVICE_PX = 16_384;
const COOKIE_BANNER_FIND_MS = 3000;
const COOKIE_BANNER_WAIT_MS = 6000;

export type Captured = {
  bytes: Buffer;
  mimeType: string;
  ext: string;
  width: number;
  height: number;
  /** Full-page captures: the page's whole height (CSS px), and whether the capture stopped short of it. */
  pageHeight: number | null;
  truncated: boolean;
};

/** The tallest full page captured in CSS px: Chromium's device-pixel limit at the page's pixel ratio. */
function maxFullPageHeight(o: ScreenshotOptions): number {
  return Math.floor(MAX_CAPTURE_DEVICE_PX / DEVICE_PRESETS[o.deviceType].deviceScaleFactor);
}

const pageHeightOf = (page: Page) =>
  page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0));

export function contextOptions(o: ScreenshotOptions): PageOptions {
  const preset = DEVICE_PRESETS[o.deviceType];
  return {
    ...preset,
    viewport: {
      width: o.viewportWidth ?? preset.viewport.width,
      height: o.viewportHeight ?? preset.viewport.height,
    },
    colorScheme: o.darkMode ? 'dark' : 'light',
    blockRequest: o.blockAds ? (url) => isAdRequest(url) : undefined,
  };
}

export async function capture(
  pool: BrowserPool,
  url: string,
  o: ScreenshotOptions,
  signal?: AbortSignal,
): Promise<Captured> {
  return pool.withPage({ ...contextOptions(o), signal }, async (page, log) => {
    const banners = o.blockCookieBanners ? await handleCookieBanners(page.context()) : undefined;
    await navigate(page, log, url, { waitForSelector: o.waitForSelector, waitForTimeout: o.waitForTimeout });
    if (o.blockAds) await hideAdSlots(page, log.adsBlocked);
    if (banners) await settleBanners(page, banners);
    return o.format === 'pdf' ? pdf(page, o) : image(page, o);
  });
}

/** An ad that was not fetched leaves a broken-image box: the slot is hidden like the ad networks' own. */
async function hideAdSlots(page: Page, blocked: string[]) {
  await page.addStyleTag({ content: AD_SLOT_CSS }).catch(() => undefined);
  if (blocked.length === 0) return;
  await page
    .evaluate((urls) => {
      const gone = new Set(urls);
      for (const el of document.querySelectorAll<HTMLImageElement | HTMLIFrameElement>('img, iframe')) {
        if (gone.has(el.src)) el.style.visibility = 'hidden';
      }
    }, blocked)
    .catch(() => undefined);
}

/**
 * Waits for autoconsent to answer a banner: up to 3 s for it to find one (a page without a banner costs
 * that much), then up to 6 s in all for the answer.
 */
async function settleBanners(page: Page, state: CookieBannerState) {
  const start = Date.now();
  while (!state.done) {
    const elapsed = Date.now() - start;
    if ((!state.detected && elapsed > COOKIE_BANNER_FIND_MS) || elapsed > COOKIE_BANNER_WAIT_MS) break;
    await page.waitForTimeout(100);
  }
  // The click that rejected the banner may start an animation out.
  if (state.done) await page.waitForTimeout(300);
}

async function image(page: Page, o: ScreenshotOptions): Promise<Captured> {
  const type = o.format === 'jpeg' ? 'jpeg' : 'png';
  const quality = o.format === 'jpeg' ? (o.quality ?? 80) : undefined;
  let shot: Buffer;
  let pageHeight: number | null = null;
  let truncated = false;
  if (o.selector) {
    let el: Awaited<ReturnType<Page['$']>>;
    try {
      el = await page.$(o.selector);
    } catch {
      throw errors.validation(`selector '${o.selector}' is not a valid CSS selector.`);
    }
    if (!el) throw webdataErrors.selectorNotFound(o.selector);
    const box = await el.boundingBox();
    if (!box || box.width < 1 || box.height < 1) {
      throw browserErrors.pageFailed(`The element matching '${o.selector}' is not visible (it has no size).`);
    }
    shot = await el.screenshot({ type, quality, animations: 'disabled' });
  } else if (o.fullPage) {
    pageHeight = await pageHeightOf(page);
    const max = maxFullPageHeight(o);
    const width = page.viewportSize()!.width;
    truncated = pageHeight > max;
    shot = truncated
      ? await page.screenshot({ type, quality, fullPage: true, clip: { x: 0, y: 0, width, height: max } })
      : await page.screenshot({ type, quality, fullPage: true, animations: 'disabled' });
  } else {
    shot = await page.screenshot({ type, quality, animations: 'disabled' });
  }
  const img = o.format === 'webp' ? sharp(shot).webp({ quality: o.quality ?? 80 }) : sharp(shot);
  const bytes = o.format === 'webp' ? await img.toBuffer() : shot;
  const meta = await sharp(bytes).metadata();
  return {
    bytes,
    mimeType: `image/${o.format}`,
    ext: o.format === 'jpeg' ? 'jpg' : o.format,
    width: meta.width ?? 0,
    height: meta.height ?? 0,
    pageHeight,
    truncated,
  };
}

async function pdf(page: Page, o: ScreenshotOptions): Promise<Captured> {
  const view = page.viewportSize()!;
  const pageHeight = o.fullPage ? await pageHeightOf(page) : null;
  const height = pageHeight === null ? view.height : Math.min(maxFullPageHeight(o), pageHeight);
  // Print media would restyle the page; the PDF shows it as the screen does, dark mode included.
  await page.emulateMedia({ media: 'screen', colorScheme: o.darkMode ? 'dark' : 'light' });
  const bytes = await page.pdf({
    width: `${view.width}px`,
    height: `${height}px`,
    printBackground: true,
    pageRanges: '1',
    margin: { top: '0', right: '0', bottom: '0', left: '0' },
  });
  return {
    bytes,
    mimeType: 'application/pdf',
    ext: 'pdf',
    width: view.width,
    height,
    pageHeight,
    truncated: pageHeight !== null && pageHeight > height,
  };
}
