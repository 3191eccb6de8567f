import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordModelUsage } from '../../../src/areas/models/model-usage.ts';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { seedApiKey } from '../../seed.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// The AI spend page in headless Chromium: seeded usage of two API keys and two models over several days
// draws as a stacked SVG chart, split by model, by key or for the organization, in dollars or tokens; an admin
// sets budgets and an allow-list there.

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ t, base } = await startPier());
  browser = await launchBrowser();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await ctx.newPage();
  page.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const dayBefore = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

describe('AI spend page in a browser', () => {
  it('draws spend per day by model and by key from recorded usage, and shows budgets set on it', async () => {
    const { org } = await signUpIntoOrg(page, t, base, `${uniq('spend')}@example.com`, 'admin');
    const web = await t.deps.credentials.issue({ kind: 'sk_live', orgId: org.id, label: 'web shop' });
    const batch = await seedApiKey(t.deps, org.id, 'test');
    const usage = { promptTokens: 1000, completionTokens: 500, totalTokens: 1500 };
    const seed = (keyId: string, model: string, day: string, costUsd: number | null) =>
      recordModelUsage(t.deps, {
        orgId: org.id,
        environment: 'production',
        keyId,
        model,
        usage,
        costUsd,
        day,
      });
    await seed(web.row.keyId, 'openai/gpt-4o-mini', dayBefore(0), 0.25);
    await seed(web.row.keyId, 'anthropic/claude-sonnet-4-5', dayBefore(0), 1.5);
    await seed(batch.keyId, 'openai/gpt-4o-mini', dayBefore(1), 0.75);
    await seed(batch.keyId, 'anthropic/claude-sonnet-4-5', dayBefore(3), 2);
    await seed(batch.keyId, 'pier/llama3.2', dayBefore(2), null); // no price: in the totals, not the chart

    await page.goto(`${base}/ai-spend`);
    await page.getByRole('heading', { name: 'AI spend' }).waitFor();
    expect(await page.getByTestId('spend-total').textContent()).toContain('$4.50 in 30 days · 5 requests');
    const chart = page.getByRole('img', { name: 'Spend per day by model' });
    await chart.waitFor();
    const bars = chart.locator('rect[data-series]');
    expect(await bars.count()).toBe(4);
    expect(await chart.locator(`[data-day="${dayBefore(0)}"] rect`).count()).toBe(2);
    const titles = await chart.locator('rect title').allTextContents();
    expect(titles).toContain(`${dayBefore(3)} · anthropic/claude-sonnet-4-5: $2.00`);
    const legend = page.getByRole('list', { name: 'Series' });
    expect(await legend.getByRole('listitem').allTextContents()).toEqual([
      'anthropic/claude-sonnet-4-5',
      'openai/gpt-4o-mini',
    ]);
    // The tallest day (today, $1.75) fills the plot; a $0.75 day is about 43 % of it.
    const h = async (day: string) =>
      (await chart
        .locator(`[data-day="${day}"] rect`)
        .evaluateAll((els) => els.reduce((n, e) => n + Number(e.getAttribute('height')), 0))) as number;
    expect((await h(dayBefore(1))) / (await h(dayBefore(3)))).toBeCloseTo(0.75 / 2, 1);
    await page.locator('tbody tr', { hasText: 'pier/llama3.2' }).getByText('no price').waitFor();
    await shot(page, 'ai-spend-by-model');

    await page.getByRole('radio', { name: 'API key' }).check();
    const byKey = page.getByRole('img', { name: 'Spend per day by API key' });
    await byKey.waitFor();
    expect(await legend.getByRole('listitem').allTextContents()).toEqual(['test key', 'web shop']);

    // The organization's own spend over time: one series, a bar per day of its total.
    await page.getByRole('radio', { name: 'Organization' }).check();
    const byOrg = page.getByRole('img', { name: 'Spend per day by organization' });
    await byOrg.waitFor();
    expect(await legend.getByRole('listitem').allTextContents()).toEqual([org.name]);
    expect(await byOrg.locator(`[data-day="${dayBefore(0)}"] rect`).count()).toBe(1);
    expect(await byOrg.locator('rect title').allTextContents()).toContain(
      `${dayBefore(0)} · ${org.name}: $1.75`,
    );
    // Usage in tokens, where the model without a price counts too.
    await page.getByRole('radio', { name: 'Model' }).check();
    await page.getByRole('radio', { name: 'Tokens' }).check();
    const tokens = page.getByRole('img', { name: 'Tokens per day by model' });
    await tokens.waitFor();
    expect(await tokens.locator('rect[data-series]').count()).toBe(5);
    expect(await tokens.locator('rect title').allTextContents()).toContain(
      `${dayBefore(2)} · pier/llama3.2: 1500`,
    );
    await shot(page, 'ai-spend-tokens');

    // Budgets: the organization's and one key's, and the key's allowed models.
    await page.getByLabel('USD per month (empty: none)').fill('50');
    await page.getByRole('button', { name: 'Set budget' }).click();
    // This month's spend: the seeded days that fall in the current calendar month (UTC).
    const month = dayBefore(0).slice(0, 7);
    const monthSpend = [
      [0, 1.75],
      [1, 0.75],
      [3, 2],
    ].reduce((n, [d, usd]) => n + (dayBefore(d!).startsWith(month) ? usd! : 0), 0);
    await page
      .getByTestId('org-budget')
      .getByText(`$${monthSpend.toFixed(2)} spent of $50.00`)
      .waitFor();
    await page.getByLabel('Budget for').selectOption({ label: 'web shop' });
    await page.getByLabel('USD per month (empty: none)').fill('10');
    await page.getByRole('button', { name: 'Set budget' }).click();
    const row = page.getByRole('table', { name: 'API key budgets' }).locator('tr', { hasText: 'web shop' });
    await row.getByText('$10.00').waitFor();
    expect(await row.textContent()).toContain('$1.75');
    await page.getByLabel('Models of').selectOption({ label: 'web shop' });
    await page.getByLabel(/Allowed models/).fill('gpt-4o-mini, anthropic/*');
    await page.getByRole('button', { name: 'Set models' }).click();
    await row.getByText('gpt-4o-mini, anthropic/*').waitFor();
    await shot(page, 'ai-spend-budgets');
  });
});
