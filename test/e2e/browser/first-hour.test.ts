import { gzipSync } from 'node:zlib';
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
// tokens page; then every dashboard page (signed in and signed out) fits 390 and 360 px without sideways
// scrolling, screenshots of each kept in test-artifacts/screenshots; the usage charts draw seeded rows.

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

/** Creates a one-step workflow through v1 and starts it; answers the run's id. */
async function startRun(key: string, projectSlug: string): Promise<string> {
  const v1 = async (path: string, body: unknown) => {
    const r = await fetch(`${base}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await r.json()) as { id: string };
    expect(r.status, JSON.stringify(json)).toBeLessThan(300);
    return json;
  };
  const wf = await v1('/workflows', {
    projectSlug,
    slug: 'a-workflow-with-a-rather-long-slug-for-a-phone',
    name: 'Send the weekly summary of every open order to the bakery',
    steps: [{ id: 'summarise-every-open-order-of-the-week', type: 'transform', expression: '1' }],
  });
  return (await v1(`/workflows/${wf.id}/run`, { projectSlug })).id;
}

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

describe('the first hour, at 390 px', { timeout: 120_000 }, () => {
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
    // A run for the run page (no workers here: it stays pending, its steps and graph drawn), in the sandbox:
    // production's workflow list stays empty and shows its next step.
    const run = await startRun((await seedApiKey(t.deps, org!.id, 'test')).key, project.slug);
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
      `/workflows/runs/${run}?env=sandbox`,
      '/tokens',
      '/cli',
      '/cli/login',
      '/oauth/consent',
      '/orgs/new',
      '/no-such-page',
    ];
    const tooWide: string[] = [];
    // Each page loads once at 390 px and is measured again at 360 after a resize (CSS re-lays it out).
    const measure = async (p: Page, paths: string[], label: (path: string) => string) => {
      for (const path of paths) {
        await p.setViewportSize({ width: 390, height: 844 });
        await p.goto(`${base}${path}`);
        await p.locator('h1').first().waitFor();
        await p.waitForLoadState('networkidle');
        for (const width of [390, 360]) {
          await p.setViewportSize({ width, height: 844 });
          const name = `${width}${label(path)}`;
          await shot(p, `first-hour-${name}`);
          const o = await overflow(p);
          if (o.scrollWidth > o.clientWidth)
            tooWide.push(`${name}: ${o.scrollWidth}px (${o.wide.join(', ')})`);
        }
      }
    };
    await measure(page, pages, (path) =>
      path.replace(project.slug, 'project').replace(run, 'run').replace(/[/?=]/g, '-'),
    );
    // Signed out: the pages before an account, in a context without the session.
    const out = await browser.newPage();
    await measure(
      out,
      ['/sign-in', '/sign-up', '/set-password', '/verify-email'],
      (path) => `-signed-out${path.replaceAll('/', '-')}`,
    );
    await out.close();
    expect(tooWide).toEqual([]);
    // A project without deployments says how to deploy it.
    await page.goto(`${base}/projects/${project.slug}`);
    expect(await page.getByTestId('deployments-empty').textContent()).toContain(
      `npx pier deploy . --project ${project.slug}`,
    );
    // The organization's overview draws every area's usage; each area's page its own. The JavaScript of its
    // first load (every script the page fetched) stays under the dashboard's 200 KB gzipped budget.
    const scripts = new Set<string>();
    page.on('response', (r) => {
      if (r.request().resourceType() === 'script') scripts.add(r.url());
    });
    await page.goto(`${base}/projects`);
    const total = (id: string) => page.getByTestId(id).textContent();
    for (const id of ['usage-api', 'usage-mail', 'usage-runs', 'usage-web'])
      await page.locator(`[data-testid="${id}"][data-state="ready"]`).waitFor();
    // Two mail reads and the workflow's create and run answered; the unknown e-mail a 404.
    expect(await total('usage-api-ok')).toBe('4');
    expect(await total('usage-api-errors')).toBe('1');
    expect(await total('usage-mail-delivered')).toBe('3');
    expect(await total('usage-mail-bounced')).toBe('1');
    // The seeded completed run and today's pending one (the run page's).
    expect(await total('usage-runs-ok')).toBe('2');
    expect(await total('usage-runs-failed')).toBe('1');
    expect(await total('usage-credits-credits')).toBe('2');
    expect(await total('usage-web-extractions')).toBe('4');
    await page.locator('[data-testid="usage-storage"][data-state="ready"]').waitFor();
    expect(await total('usage-storage-image')).toBe('3');
    // Bars: today's API requests (2 stacked), 2 mail days, 2 run days (one of 2 stacked), 1 credits day,
    // 1 web day, 2 storage days.
    expect(await page.locator('.usage-chart svg rect').count()).toBe(11);
    await page.waitForLoadState('networkidle');
    expect(scripts.size).toBeGreaterThan(0);
    let gzipped = 0;
    for (const url of scripts)
      gzipped += gzipSync(Buffer.from(await (await fetch(url)).arrayBuffer())).length;
    expect(gzipped).toBeLessThan(200 * 1024);
    expect(await page.getByRole('img', { name: /^Mail, last 30 days, .*3 delivered/ }).count()).toBe(1);
    await shot(page, 'first-hour-usage-overview');
    for (const [path, id] of [
      ['/api-keys', 'usage-api'],
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
