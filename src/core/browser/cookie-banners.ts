import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { BrowserContext, Frame } from 'playwright-core';

// Cookie banners (`blockCookieBanners`) with DuckDuckGo's autoconsent: its rules for ~800 consent managers
// ship inside the npm package (nothing is fetched). The content script runs in every frame; it asks Pier
// for its configuration over a binding, finds the banner, and answers it the privacy-friendly way
// (`optOut`: reject or "necessary only"); its cosmetic rules hide banners it cannot click. Same message
// protocol as the package's own Playwright runner (playwright/runner.ts in the package).

const require = createRequire(import.meta.url);
let script: string | undefined;
let rules: unknown;

function load() {
  if (!script) {
    // The Playwright bundle is not in the package's exports map: it sits beside the main entry.
    const dist = path.dirname(require.resolve('@duckduckgo/autoconsent'));
    script = fs.readFileSync(path.join(dist, 'autoconsent.playwright.js'), 'utf8');
    rules = require('@duckduckgo/autoconsent/rules/compact-rules.json');
  }
  return { script, rules };
}

type Message = { type: string; id?: string; code?: string; cmp?: string; result?: boolean };

export type CookieBannerState = {
  /** A consent manager was found on the page. */
  detected: boolean;
  /** It was dealt with (opt-out done, or hidden). */
  done: boolean;
};

export async function handleCookieBanners(ctx: BrowserContext): Promise<CookieBannerState> {
  const { script: content, rules: compact } = load();
  const state: CookieBannerState = { detected: false, done: false };
  const config = {
    enabled: true,
    autoAction: 'optOut',
    disabledCmps: [],
    enablePrehide: true,
    enableCosmeticRules: true,
    detectRetries: 20,
    isMainWorld: false,
  };
  await ctx.exposeBinding('autoconsentSendMessage', async ({ frame }: { frame: Frame }, msg: Message) => {
    try {
      switch (msg.type) {
        case 'init':
          await frame.evaluate(
            `autoconsentReceiveMessage({ type: "initResp", config: ${JSON.stringify(config)}, rules: { compact: ${JSON.stringify(compact)} } })`,
          );
          break;
        case 'eval': {
          const result = await frame.evaluate(msg.code ?? 'false').catch(() => false);
          await frame.evaluate(
            `autoconsentReceiveMessage({ id: ${JSON.stringify(msg.id)}, type: "evalResp", result: ${JSON.stringify(result)} })`,
          );
          break;
        }
        case 'cmpDetected':
        case 'popupFound':
          state.detected = true;
          break;
        case 'optOutResult':
        case 'autoconsentDone':
          state.done = true;
          break;
      }
    } catch {
      // The frame went away mid-conversation; nothing to answer.
    }
  });
  await ctx.addInitScript(content);
  return state;
}
