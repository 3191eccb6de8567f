import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// The Assets page in headless Chromium against a real Pier: a plain member uploads an image through the
// page's file input (XHR PUT to the presigned URL, then confirm) and a text file by dropping it, sees the
// image's thumbnail in the grid (a signed transform URL rendered by sharp), opens its details, and sees the
// storage chart by type.

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;
const email = `${uniq('cdn')}@example.com`;

beforeAll(async () => {
  ({ t, base } = await startPier());
  browser = await launchBrowser();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('assets page in a browser', { timeout: 120_000 }, () => {
  it('a member uploads by file input and drop, sees the thumbnail, the details and the usage chart', async () => {
    await signUpIntoOrg(page, t, base, email, 'member');

    await page.goto(`${base}/projects`);
    await page.getByRole('link', { name: 'Assets' }).click();
    await page.getByRole('heading', { name: 'Assets', level: 1 }).waitFor();
    await page.getByText('No assets here yet.').waitFor();
    // The empty grid says how to fill it, with the exact command.
    expect(await page.getByTestId('assets-empty').textContent()).toMatch(
      /npx pier cdn upload \.\/photo\.png --org \S/,
    );

    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#c33' } })
      .png()
      .toBuffer();
    await page.getByLabel('Into folder').fill('shots');
    await page
      .getByTestId('file-input')
      .setInputFiles({ name: 'red.png', mimeType: 'image/png', buffer: png });
    // The upload opens the new asset's details; its thumbnail is a transform rendered by Pier.
    const detail = page.getByTestId('asset-detail');
    await detail.getByTestId('asset-dimensions').waitFor();
    expect(await detail.getByTestId('asset-dimensions').textContent()).toBe('300 × 200');
    expect(await detail.getByRole('heading').textContent()).toBe('red.png');
    const cdnUrl = await detail.locator('code').textContent();
    expect(cdnUrl).toMatch(new RegExp(`^${base}/cdn/[0-9a-f-]+/red\\.png$`));
    const thumb = page.getByTestId('asset-grid').locator('img');
    await thumb.waitFor();
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('[data-testid=asset-grid] img');
      return !!img && img.complete && img.naturalWidth === 320;
    });
    expect(await thumb.getAttribute('src')).toMatch(/\/cdn\/t\/[0-9a-f-]+\?.*sig=/);

    // A second file by drag and drop, into no folder.
    await page.getByLabel('Into folder').fill('');
    const dt = await page.evaluateHandle(() => {
      const d = new DataTransfer();
      d.items.add(new File(['hello from a drop'], 'notes.txt', { type: 'text/plain' }));
      return d;
    });
    await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer: dt });
    await page.getByTestId('asset-grid').getByText('notes.txt').waitFor();

    // Storage by type: one bar per type, the image's the PNG's size.
    const chart = page.getByTestId('usage-chart');
    await chart.locator('g[data-type=image]').waitFor();
    expect(await chart.locator('g').count()).toBe(2);
    expect(await page.getByTestId('usage-total').textContent()).toMatch(/in 2 objects/);

    // Filters: by type, and the folder the image went into.
    await page.getByLabel('Type', { exact: true }).selectOption('image');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=asset-grid] li').length === 1);
    await page.getByLabel('Type', { exact: true }).selectOption('');
    await page.getByLabel('Folder', { exact: true }).selectOption('shots');
    await page.waitForFunction(() => {
      const items = document.querySelectorAll('[data-testid=asset-grid] li');
      return items.length === 1 && items[0]!.textContent!.includes('red.png');
    });
    // A member does not see the webhook secret section (owners and admins only).
    expect(await page.getByRole('heading', { name: 'Webhook signing secret' }).count()).toBe(0);
    await shot(page, 'cdn-assets');
  });
});
