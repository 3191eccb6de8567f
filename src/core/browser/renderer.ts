import { type PageAction, runActions } from './actions.ts';
import { navigate, type WaitOptions } from './navigate.ts';
import type { BrowserPool } from './pool.ts';

// For extraction of pages that need JavaScript: the rendered DOM's HTML, through the shared pool and its
// guard; with `actions`, those run first (the HTML is the page after them), and with `screenshot` the same
// page is shot after the actions too, so the picture and the text show one state of the page.

export type RenderOptions = Pick<WaitOptions, 'waitForSelector' | 'waitForTimeout'> & {
  signal?: AbortSignal;
  actions?: readonly PageAction[];
  screenshot?: { fullPage: boolean };
};
export type RenderedShot = { bytes: Buffer; width: number; height: number; truncated: boolean };
export type Rendered = { html: string; finalUrl: string; status: number; screenshot?: RenderedShot };

/** Tallest full page shot, in CSS px (Chromium's own limit is 16384 device px per side). */
const MAX_SHOT_HEIGHT = 16_384;
const VIEWPORT = { width: 1280, height: 800 };

export function createPageRenderer(pool: BrowserPool) {
  return {
    render(url: string, o: RenderOptions = {}): Promise<Rendered> {
      return pool.withPage({ signal: o.signal, viewport: VIEWPORT }, async (page, log) => {
        const nav = await navigate(page, log, url, { ...o, rejectHttpErrors: false });
        if (o.actions?.length) await runActions(page, o.actions);
        const html = await page.content();
        if (!o.screenshot) return { html, finalUrl: page.url() || nav.finalUrl, status: nav.status };
        const full = o.screenshot.fullPage;
        const height = full
          ? await page.evaluate(() => document.documentElement.scrollHeight)
          : VIEWPORT.height;
        const shotHeight = Math.min(height, MAX_SHOT_HEIGHT);
        const bytes = await page.screenshot({
          type: 'png',
          animations: 'disabled',
          ...(full
            ? { fullPage: true, clip: { x: 0, y: 0, width: VIEWPORT.width, height: shotHeight } }
            : {}),
        });
        return {
          html,
          finalUrl: page.url() || nav.finalUrl,
          status: nav.status,
          screenshot: { bytes, width: VIEWPORT.width, height: shotHeight, truncated: height > shotHeight },
        };
      });
    },
  };
}

export type PageRenderer = ReturnType<typeof createPageRenderer>;
