import { eq } from 'drizzle-orm';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDomain } from '../../../src/areas/mail/domains.ts';
import { orgs } from '../../../src/areas/orgs/tables.ts';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { seedApiKey, seedProject } from '../../seed.ts';
import {
  seedAssetOn,
  seedConnectionOn,
  seedExtractionOn,
  seedMailOn,
  seedMemoryOn,
  seedRunOn,
} from '../../usage-seed.ts';
import { launchBrowser, shot, startPier } from './browser-kit.ts';

// The first hour on a phone (issue 39): a fresh Pier without SMTP_URL, a new person signs up at 390 px,
// verifies through "Mail Pier sent you" (docs/decisions/103), creates an organization and reaches the
// tokens page; then every dashboard page fits 390 and 360 px without sideways scrolling.

let t: TestApp;
let base: string;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
const email = `${uniq('first')}@example.com`;
const orgSlug = uniq('org');

beforeAll(async () => {
  ({ t, base } = await startPier());
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
  page = await ctx.newPage();
  page.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** The page's own width against the viewport: sideways scrolling is the gap between them. */
async function overflow(p: Page) {
  return p.evaluate(() => {
    const el = document.scrollingElement ?? document.documentElement;
    const wide = [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > el.clientWidth + 1)
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className}`);
    return { scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, wide };
  });
}

async function expectFits(p: Page, name: string) {
  await shot(p, `first-hour-${name}`);
  const o = await overflow(p);
  expect(o.scrollWidth, `${name} is ${o.scrollWidth}px wide: ${o.wide.join(', ')}`).toBeLessThanOrEqual(
    o.clientWidth,
  );
}

describe('the first hour, at 390 px', () => {
  it('signs up without SMTP, verifies through the mail Pier shows, creates an organization, reaches tokens', async () => {
    expect(t.deps.config.smtp).toBeUndefined();
    await page.goto(`${base}/sign-up`);
    await expectFits(page, '01-sign-up');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Verify your e-mail' }).waitFor();
    await page.getByRole('heading', { name: 'Mail Pier sent you' }).waitFor();
    const item = page.getByTestId('self-mail-item');
    await item.getByText('Verify your e-mail address for Pier').waitFor();
    await expectFits(page, '02-verify-with-self-mail');
    await item.getByRole('link', { name: /\/verify-email#token=/ }).click();
    await page.getByRole('heading', { name: 'Welcome to Pier' }).waitFor();
    await page.getByRole('link', { name: 'Create an organization' }).click();
    await page.getByLabel('Name').fill('First Hour Bakery');
    await page.getByLabel('Slug').fill(orgSlug);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    // Empty states say what to run next.
    await page.getByText(`npx pier projects create --org ${orgSlug} --slug shop --name Shop`).waitFor();
    await page.goto(`${base}/domains`);
    const none = page.getByTestId('no-domains');
    await none.getByText(`npx pier domains add example.com --org ${orgSlug}`).waitFor();
    expect(await none.textContent()).toContain('_pier-verification.example.com');
    expect(await none.textContent()).toContain('v=DKIM1; k=rsa; p=');
    await expectFits(page, '03-domains-empty');
    await page.getByText('Menu').click();
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('heading', { name: 'Personal tokens', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/tokens');
  });

  it('fits every dashboard page at 390 and 360 px', async () => {
    const [org] = await t.deps.db.orm.select().from(orgs).where(eq(orgs.slug, orgSlug));
    const project = await seedProject(t.deps, org!, uniq('a-rather-long-project-slug'));
    const { key } = await seedApiKey(t.deps, org!.id, 'live');
    for (const path of ['/mail/emails', '/mail/emails', '/mail/emails/nope'])
      await fetch(`${base}/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    // Usage on three days of the last thirty: the charts draw it.
    const day = (ago: number) =>
      new Date(t.deps.clock.now().getTime() - ago * 86_400_000).toISOString().slice(0, 10);
    await seedMailOn(t.deps, org!.id, day(0), 'delivered', 3);
    await seedMailOn(t.deps, org!.id, day(2), 'bounced');
    await seedRunOn(t.deps, org!.id, day(1), 1.5);
    await seedRunOn(t.deps, org!.id, day(1), 0.5, 'failed');
    await seedExtractionOn(t.deps, org!.id, day(5), 4);
    await seedAssetOn(t.deps, org!.id, day(3), 'image', 3 * 1024 * 1024);
    await seedAssetOn(t.deps, org!.id, day(4), 'video', 1024 * 1024);
    await seedConnectionOn(t.deps, org!.id, day(2));
    // In the sandbox: production's memory list stays empty and shows its next step.
    await seedMemoryOn(t.deps, org!.id, day(6), day(1), 2, 'sandbox');
    // A pending sender domain: its page lists DNS records with a long DKIM value.
    await addDomain(t.deps, org!.id, `${uniq('mail')}.first-hour-bakery.example`);
    const pages = [
      '/projects',
      `/projects/${project.slug}`,
      '/members',
      '/api-keys',
      '/ai-spend',
      '/inbox',
      '/domains',
      '/memory',
      '/assets',
      '/integrations',
      '/workflows',
      '/web-data',
      '/tokens',
      '/cli',
      '/orgs/new',
    ];
    const tooWide: string[] = [];
    for (const width of [390, 360]) {
      await page.setViewportSize({ width, height: 844 });
      for (const path of pages) {
        await page.goto(`${base}${path}`);
        await page.locator('h1').first().waitFor();
        await page.waitForLoadState('networkidle');
        const name = `${width}${path.replace(project.slug, 'project').replaceAll('/', '-')}`;
        await shot(page, `first-hour-${name}`);
        const o = await overflow(page);
        if (o.scrollWidth > o.clientWidth) tooWide.push(`${name}: ${o.scrollWidth}px (${o.wide.join(', ')})`);
      }
    }
    expect(tooWide).toEqual([]);
    // The organization's overview draws every area's usage; each area's page its own.
    await page.goto(`${base}/projects`);
    const total = (id: string) => page.getByTestId(id).textContent();
    for (const id of ['usage-api', 'usage-mail', 'usage-runs', 'usage-web'])
      await page.locator(`[data-testid="${id}"][data-state="ready"]`).waitFor();
    expect(await total('usage-api-ok')).toBe('2');
    expect(await total('usage-api-errors')).toBe('1');
    expect(await total('usage-mail-delivered')).toBe('3');
    expect(await total('usage-mail-bounced')).toBe('1');
    expect(await total('usage-runs-ok')).toBe('1');
    expect(await total('usage-runs-failed')).toBe('1');
    expect(await total('usage-credits-credits')).toBe('2');
    expect(await total('usage-web-extractions')).toBe('4');
    // Bars: today's API requests (2 stacked), 2 mail days, 1 run day (2 stacked), 1 credits day, 1 web day.
    expect(await page.locator('.usage-chart svg rect').count()).toBe(8);
    expect(await page.getByRole('img', { name: /^Mail, last 30 days, .*3 delivered/ }).count()).toBe(1);
    await shot(page, 'first-hour-usage-overview');
    for (const [path, id] of [
      ['/inbox', 'usage-mail'],
      ['/workflows', 'usage-runs'],
      ['/web-data', 'usage-web'],
    ] as const) {
      await page.goto(`${base}${path}`);
      await page.locator(`[data-testid="${id}"][data-state="ready"]`).waitFor();
    }
    // The other areas' pages chart their own usage: storage by type, memories, connections.
    await page.goto(`${base}/assets`);
    await page.locator('[data-testid="usage-storage"][data-state="ready"]').waitFor();
    expect(await total('usage-storage-image')).toBe('3');
    expect(await total('usage-storage-video')).toBe('1');
    expect(
      await page.getByRole('img', { name: /^Storage added by type \(MB\), .*3 image \(MB\)/ }).count(),
    ).toBe(1);
    await page.goto(`${base}/integrations`);
    await page.locator('[data-testid="usage-connections"][data-state="ready"]').waitFor();
    expect(await total('usage-connections-connected')).toBe('1');
    await page.goto(`${base}/memory`);
    await page.locator('[data-testid="usage-memory"][data-state="ready"]').waitFor();
    expect(await total('usage-memory-stored')).toBe('1');
    expect(await total('usage-memory-changed')).toBe('2');
    // Empty lists say what to do next, with the exact call.
    await page.getByTestId('memory-empty').waitFor();
    expect(await page.getByTestId('memory-empty').textContent()).toContain('$PIER_URL/v1/memory/memories');
    await page.goto(`${base}/workflows`);
    await page.getByTestId('workflows-empty').waitFor();
    expect(await page.getByTestId('workflows-empty').textContent()).toContain('$PIER_URL/v1/workflows');
    // Loaded tables are not left busy (greyed, failing contrast).
    await page.goto(`${base}/integrations`);
    await page.getByRole('table', { name: 'Connectors' }).waitFor();
    expect(await page.locator('[aria-busy="true"]').count()).toBe(0);
  });
});
