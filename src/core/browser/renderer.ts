import { navigate, type WaitOptions } from './navigate.ts';
import type { BrowserPool } from './pool.ts';

// For extraction of pages that need JavaScript: the rendered DOM's HTML, through the shared pool and its guard.

export type RenderOptions = Pick<WaitOptions, 'waitForSelector' | 'waitForTimeout'> & {
  signal?: AbortSignal;
};
export type Rendered = { html: string; finalUrl: string; status: number };

export function createPageRenderer(pool: BrowserPool) {
  return {
    render(url: string, o: RenderOptions = {}): Promise<Rendered> {
      return pool.withPage({ signal: o.signal }, async (page, log) => {
        const nav = await navigate(page, log, url, { ...o, rejectHttpErrors: false });
        return { html: await page.content(), finalUrl: nav.finalUrl, status: nav.status };
      });
    },
  };
}

export type PageRenderer = ReturnType<typeof createPageRenderer>;
