import type { Page } from 'playwright-core';
import { errors } from '../errors.ts';
import { browserErrors } from './errors.ts';

// What a caller may do on a page before it is captured, as Firecrawl's `actions` name them: wait (a time
// or a selector), click, write (into the focused element, or into `selector`), press a key, scroll. Each
// step waits at most ACTION_TIMEOUT_MS for its element; a step that cannot be done fails the capture with
// the step's number and why, rather than capturing a page in the wrong state.

export type PageAction =
  | { type: 'wait'; milliseconds?: number; selector?: string }
  | { type: 'click'; selector: string; all?: boolean }
  | { type: 'write'; text: string; selector?: string }
  | { type: 'press'; key: string }
  | { type: 'scroll'; direction?: 'up' | 'down'; selector?: string };

export const ACTION_TIMEOUT_MS = 10_000;

export async function runActions(page: Page, actions: readonly PageAction[]): Promise<void> {
  for (const [i, a] of actions.entries()) {
    try {
      await runOne(page, a);
    } catch (err) {
      throw actionError(i, a, err);
    }
  }
}

async function runOne(page: Page, a: PageAction): Promise<void> {
  const timeout = ACTION_TIMEOUT_MS;
  switch (a.type) {
    case 'wait':
      if (a.selector) await page.waitForSelector(a.selector, { state: 'visible', timeout });
      if (a.milliseconds) await page.waitForTimeout(a.milliseconds);
      return;
    case 'click':
      if (a.all) {
        await page.waitForSelector(a.selector, { state: 'attached', timeout });
        for (const el of await page.$$(a.selector)) await el.click({ timeout });
      } else {
        await page.click(a.selector, { timeout });
      }
      return;
    case 'write':
      if (a.selector) await page.fill(a.selector, a.text, { timeout });
      else await page.keyboard.type(a.text);
      return;
    case 'press':
      await page.keyboard.press(a.key);
      return;
    case 'scroll': {
      const dy = a.direction === 'up' ? -1 : 1;
      if (a.selector) {
        await page.waitForSelector(a.selector, { state: 'attached', timeout });
        await page.$eval(a.selector, (el, d) => el.scrollBy(0, d * el.clientHeight), dy);
      } else {
        await page.evaluate((d) => window.scrollBy(0, d * window.innerHeight), dy);
      }
      // Content loaded on scroll (infinite lists, lazy images) gets a moment to arrive.
      await page.waitForTimeout(250);
      return;
    }
  }
}

function actionError(i: number, a: PageAction, err: unknown) {
  const msg = String((err as Error)?.message ?? err);
  const selector = 'selector' in a ? a.selector : undefined;
  if (selector && /not a valid selector|Unexpected token|SyntaxError/i.test(msg) && !/Timeout/i.test(msg)) {
    return errors.validation(`actions[${i}]: '${selector}' is not a valid CSS selector.`);
  }
  if (a.type === 'press' && /Unknown key/i.test(msg)) {
    return errors.validation(`actions[${i}]: '${a.key}' is not a key name (use names like Enter, Tab, a).`);
  }
  if (/Timeout/i.test(msg) && selector) {
    return browserErrors.pageFailed(
      `Action ${i + 1} (${a.type}): no visible element matched '${selector}' within ${ACTION_TIMEOUT_MS} ms.`,
    );
  }
  return browserErrors.pageFailed(`Action ${i + 1} (${a.type}) failed: ${msg.split('\n')[0]!.slice(0, 160)}`);
}
