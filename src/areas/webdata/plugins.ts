import type { PageAction } from '../../core/browser/actions.ts';
import type { Deps } from '../../deps.ts';

// What web data gets from outside the area, injected rather than imported: the browser (the Chromium pool
// lives in src/core/browser/, built on its own branch) and the screenshot kind of batches and schedules
// (src/areas/webdata/screenshots/). Whoever builds the process wires them with plugInto(deps, {...});
// without a renderer, extractions that need a browser fail with a clear error, and without a screenshot
// runner, screenshot batches and schedules fail each URL saying so.

export type RenderOptions = {
  waitForSelector?: string;
  waitForTimeout?: number;
  signal?: AbortSignal;
  /** Run on the page before its HTML (and screenshot) are taken. */
  actions?: readonly PageAction[];
  /** Also shoot the page (PNG, 1280 px wide), after the actions. */
  screenshot?: { fullPage: boolean };
};

export type RenderedPage = {
  html: string;
  finalUrl: string;
  status: number;
  screenshot?: { bytes: Buffer; width: number; height: number; truncated: boolean };
};

export type PageRenderer = {
  /** Loads the URL in the browser (every request through the SSRF guard) and returns the rendered HTML. */
  render(url: string, opts: RenderOptions): Promise<RenderedPage>;
};

export type KindScope = { orgId: string; environment: string };

/** Runs one URL of a batch or schedule; `content` is what change detection compares (text or pixels). */
export type KindRunner = (
  deps: Deps,
  scope: KindScope,
  url: string,
  config: Record<string, unknown>,
  ctx: { batchId?: string; signal?: AbortSignal },
) => Promise<{
  resultId: string | null;
  ok: boolean;
  error?: string | null;
  /** The failure's code, as the result record carries it (an extraction's `errorCode`). */
  errorCode?: string | null;
  content?: string | null;
}>;

export type WebdataPlugins = { renderer?: PageRenderer; screenshot?: KindRunner };

const plugged = new WeakMap<Deps, WebdataPlugins>();

export function plugInto(deps: Deps, plugins: WebdataPlugins): void {
  plugged.set(deps, { ...plugged.get(deps), ...plugins });
}

export function rendererOf(deps: Deps): PageRenderer | undefined {
  return plugged.get(deps)?.renderer;
}

export function screenshotRunnerOf(deps: Deps): KindRunner | undefined {
  return plugged.get(deps)?.screenshot;
}
