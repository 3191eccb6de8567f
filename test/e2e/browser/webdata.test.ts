import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tickSchedules } from '../../../src/areas/webdata/schedules.ts';
import { closeSharedBrowserPool } from '../../../src/core/browser/shared.ts';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { seedApiKey } from '../../seed.ts';
import { type Site, startSite } from '../../webdata-site.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// The "Web data" page in headless Chromium against a real Pier with its workers: an app makes a screenshot,
// a crawl, a batch and a schedule through v1; a member opens the page and sees the screenshot as a picture
// (loaded from the CDN), the crawl's and batch's progress, and the schedule's last run.

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;
let site: Site;
const email = `${uniq('wd')}@example.com`;

async function v1(key: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await r.json();
  expect(r.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

async function until(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  site = await startSite({ articles: 3 });
  ({ t, base } = await startPier(
    { OUTBOUND_ALLOW: '127.0.0.1/32', BROWSER_MAX_PAGES: '2', BROWSER_PAGE_TIMEOUT_MS: '120000' },
    { background: true },
  ));
  browser = await launchBrowser();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await closeSharedBrowserPool();
  await site?.close();
});

describe('web data page in a browser', { timeout: 240_000 }, () => {
  it('shows screenshots as pictures, crawl and batch progress, and schedules with their last run', async () => {
    const { org } = await signUpIntoOrg(page, t, base, email, 'member');
    const live = (await seedApiKey(t.deps, org.id, 'live')).key;

    const s = await v1(live, 'POST', '/webdata/screenshots', {
      url: `${site.url}/articles/1`,
      viewportWidth: 800,
      viewportHeight: 500,
    });
    const c = await v1(live, 'POST', '/webdata/crawl', { url: `${site.url}/`, maxDepth: 1, maxPages: 3 });
    const b = await v1(live, 'POST', '/webdata/batch/extractions', {
      urls: [`${site.url}/about`, `${site.url}/missing`],
      config: { mode: 'markdown' },
    });
    await v1(live, 'POST', '/webdata/schedules', {
      name: 'Docs watch',
      url: `${site.url}/docs`,
      type: 'extraction',
      frequency: 'daily',
      detectChanges: true,
    });
    await tickSchedules(t.deps);
    await until(
      async () =>
        (await v1(live, 'GET', `/webdata/screenshots/${s.id}`)).status === 'completed' &&
        (await v1(live, 'GET', `/webdata/crawl/${c.id}`)).status === 'completed' &&
        (await v1(live, 'GET', `/webdata/batch/${b.id}`)).status === 'completed',
      'the screenshot, crawl and batch',
    );

    await page.goto(`${base}/`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Web data' }).click();
    await page.getByRole('heading', { name: 'Web data', level: 1 }).waitFor();

    const img = page
      .getByTestId('screenshot')
      .getByRole('img', { name: `Screenshot of ${site.url}/articles/1` });
    await img.waitFor();
    await page.waitForFunction((alt) => {
      const el = [...document.images].find((i) => i.alt === alt);
      return !!el && el.complete && el.naturalWidth > 0;
    }, `Screenshot of ${site.url}/articles/1`);
    expect(await img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(800);
    await expect.poll(() => page.getByTestId('screenshot').first().textContent()).toContain('800×500');

    const crawl = page.getByTestId('crawl').first();
    expect(await crawl.textContent()).toContain('completed');
    expect(await crawl.textContent()).toContain('3/3');
    const batch = page.getByTestId('batch').first();
    expect(await batch.textContent()).toContain('2/2');
    expect(await batch.textContent()).toContain('extraction');
    // The batch's extractions are listed too (issue 39).
    expect(await page.getByTestId('extraction').count()).toBeGreaterThan(0);
    const schedule = page.getByTestId('schedule').first();
    expect(await schedule.textContent()).toContain('Docs watch');
    expect(await schedule.textContent()).toContain('completed');
    // Its only run is the first: the baseline later runs compare against, not "no change" (issue 36).
    expect(await schedule.textContent()).toContain('baseline taken');
    await shot(page, 'webdata');

    // The sandbox environment has none of them.
    await page.getByLabel('Sandbox (test keys)').check();
    await page.getByText('No screenshots yet.').waitFor();
    // Empty lists say how to start: the exact command.
    await page.getByText('npx pier web extract https://example.com/ --org').waitFor();
  });
});
