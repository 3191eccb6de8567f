import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../../../src/areas/identity/account-tables.ts';
import { hashPassword } from '../../../src/areas/identity/passwords.ts';
import { systemClock } from '../../../src/core/clock.ts';
import type { TestApp } from '../../harness.ts';
import { seedV1Tenant } from '../../seed.ts';
import type { V1Tenant } from '../../v1-security.ts';
import { callFn, launchBrowser, shot, startPier } from './browser-kit.ts';

// The dev inbox end to end: mail sent through the v1 API with no SMTP_URL lands in the built-in outbox
// (the job workers run), shows up in the dashboard by itself, and opens in a preview that can neither run
// the sender's scripts nor load anything from anywhere. A little HTTP server stands for "the sender's
// server": it must never hear from the preview.

let t: TestApp;
let base: string;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let a: V1Tenant;
let sink: http.Server;
let sinkUrl: string;
const phonedHome: string[] = [];
const dialogs: string[] = [];
const PASSWORD = 'a long enough password';

async function setPassword(userId: string) {
  await t.deps.db.orm
    .update(users)
    .set({ passwordHash: await hashPassword(PASSWORD) })
    .where(eq(users.id, userId));
}

async function signIn(p: Page, email: string) {
  await p.getByLabel('E-mail').fill(email);
  await p.getByLabel('Password').fill(PASSWORD);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

async function sendMail(key: string, body: Record<string, unknown>) {
  const r = await fetch(`${base}/v1/mail/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: 'Acme <hello@acme.test>', to: 'ada@example.com', ...body }),
  });
  expect(r.status).toBe(200);
  return (await r.json()) as { id: string };
}

beforeAll(async () => {
  sink = http.createServer((req, res) => {
    phonedHome.push(`${req.method} ${req.url}`);
    res.end('');
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  // The real clock: the inbox orders by the time each message reached the outbox.
  ({ t, base } = await startPier({}, { background: true, clock: systemClock }));
  a = await seedV1Tenant(t.deps);
  await setPassword(a.owner.user.id);
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true });
  page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  sink?.close();
});

const rows = () => page.getByTestId('mail-row');

describe('dev inbox in a browser', () => {
  it('serves the dashboard with scripts still limited to its own files', async () => {
    const res = await page.goto(`${base}/inbox`);
    const csp = res!.headers()['content-security-policy']!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("frame-src 'self'");
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    await page.waitForURL(/\/sign-in\?next=%2Finbox/);
    await signIn(page, a.owner.user.email);
    await page.getByRole('heading', { name: 'Dev inbox' }).waitFor();
    expect(await page.getByRole('link', { name: 'Dev inbox' }).getAttribute('aria-current')).toBe('page');
    await page.getByText('No production mail in the outbox yet.').waitFor();
  });

  it('shows mail sent through v1 by itself, and keeps sandbox mail apart', async () => {
    await sendMail(a.live, {
      subject: 'Welcome to Acme',
      text: 'Hello Ada,\nwelcome aboard.',
      html: [
        `<meta http-equiv="refresh" content="0;url=${sinkUrl}/refresh">`,
        `<link rel="stylesheet" href="${sinkUrl}/link.css">`,
        `<style>@import url("${sinkUrl}/import.css"); .lead { font-style: italic }</style>`,
        '<h1 style="color: rgb(200, 0, 0)">Hello Ada</h1>',
        `<p class="lead" style="background-image: url('${sinkUrl}/bg.png')">Welcome aboard.</p>`,
        `<img src="${sinkUrl}/pixel.gif" alt="">`,
        `<img src="x" onerror="document.body.insertAdjacentHTML('beforeend','<p id=ran>onerror ran</p>')">`,
        `<script>document.body.insertAdjacentHTML('beforeend','<p id=ran>script ran</p>');alert('pwned');fetch('${sinkUrl}/script')</script>`,
        `<iframe src="${sinkUrl}/frame"></iframe>`,
        `<a href="https://example.com/verify?t=1">Verify your address</a>`,
      ].join('\n'),
    });
    await sendMail(a.test, { subject: 'Sandbox only', text: 'from a test key' });
    // No reload: the page refreshes itself every few seconds.
    await rows().filter({ hasText: 'Welcome to Acme' }).waitFor();
    const row = rows().first();
    expect(await row.textContent()).toContain('hello@acme.test');
    expect(await row.textContent()).toContain('ada@example.com');
    expect(await row.textContent()).toContain('delivered');
    expect(await rows().filter({ hasText: 'Sandbox only' }).count()).toBe(0);
    await shot(page, 'inbox-01-list');

    await page.getByRole('radio', { name: 'sandbox' }).check();
    await rows().filter({ hasText: 'Sandbox only' }).waitFor();
    expect(await rows().count()).toBe(1);
    await page.getByRole('radio', { name: 'production' }).check();
    await rows().filter({ hasText: 'Welcome to Acme' }).waitFor();
  });

  it('opens a message: the HTML renders in the sandboxed preview, its script never runs, nothing loads', async () => {
    await rows().filter({ hasText: 'Welcome to Acme' }).click();
    await page.getByRole('heading', { name: 'Welcome to Acme' }).waitFor();
    expect(await page.getByRole('tab', { name: 'HTML' }).getAttribute('aria-selected')).toBe('true');
    const iframe = page.getByTestId('mail-preview');
    expect(await iframe.getAttribute('sandbox')).toBe('allow-popups allow-popups-to-escape-sandbox');
    const preview = page.frameLocator('[data-testid="mail-preview"]');
    const h1 = preview.getByRole('heading', { name: 'Hello Ada' });
    await h1.waitFor();
    // Inline styles and <style> work (mail is styled inline)...
    expect(await h1.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(200, 0, 0)');
    expect(await preview.locator('.lead').evaluate((el) => getComputedStyle(el).fontStyle)).toBe('italic');
    await shot(page, 'inbox-02-html');
    // ...but no script ran (neither <script> nor an event handler), and nothing was fetched from the
    // sender's server: no pixel, no stylesheet, no @import, no background, no frame, no meta refresh.
    await page.waitForTimeout(1500);
    expect(await preview.locator('#ran').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(phonedHome).toEqual([]);
    const frame = page.frames().find((f) => f !== page.mainFrame() && f.url() === 'about:srcdoc');
    expect(frame, 'the preview is still its srcdoc (no refresh navigated it)').toBeTruthy();

    // Control: the same HTML on a page of its own does reach the sender's server and runs its script,
    // so the silence above is the preview's doing.
    const bare = await browser.newPage();
    const found = await callFn(
      base,
      'listOutboxForCli',
      { orgSlug: a.org.slug, search: 'Welcome to' },
      a.owner.token,
    );
    const [item] = found.body.items as { id: string }[];
    const msg = await callFn(
      base,
      'getOutboxMessageForCli',
      { orgSlug: a.org.slug, id: item!.id },
      a.owner.token,
    );
    bare.on('dialog', (d) => void d.dismiss());
    await bare.setContent(msg.body.html as string, { waitUntil: 'commit' });
    await expect
      .poll(() => phonedHome, { timeout: 10_000 })
      .toEqual(expect.arrayContaining(['GET /pixel.gif', 'GET /script']));
    await bare.close();
  });

  it('shows the text part, the headers and the raw source with an .eml download', async () => {
    await page.getByRole('tab', { name: 'Text' }).click();
    expect(await page.getByTestId('mail-text').textContent()).toBe('Hello Ada,\nwelcome aboard.');
    // Arrow keys move between tabs.
    await page.getByRole('tab', { name: 'Text' }).press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Headers' }).getAttribute('aria-selected')).toBe('true');
    const headers = page.getByRole('table', { name: 'Headers' });
    await headers.waitFor();
    const subject = headers.locator('tr', { has: page.locator('td', { hasText: /^Subject$/ }) });
    expect(await subject.locator('td').nth(1).textContent()).toBe('Welcome to Acme');
    const from = headers.locator('tr', { has: page.locator('td', { hasText: /^From$/ }) });
    expect(await from.locator('td').nth(1).textContent()).toBe('Acme <hello@acme.test>');
    expect(await headers.locator('td', { hasText: /^Message-ID$/i }).count()).toBe(1);
    await shot(page, 'inbox-03-headers');

    await page.getByRole('tab', { name: 'Raw' }).click();
    const raw = (await page.getByTestId('mail-raw').textContent())!;
    expect(raw).toMatch(/Content-Type: multipart\/alternative/);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('eml-download').click(),
    ]);
    expect(download.suggestedFilename()).toBe('Welcome-to-Acme.eml');
    expect(await fs.readFile((await download.path())!, 'utf8')).toBe(raw);
    await page.getByRole('button', { name: 'Close message' }).click();
    await page.getByTestId('mail-view').waitFor({ state: 'detached' });
  });

  it('searches, filters by status and pages', async () => {
    const batch = await fetch(`${base}/v1/mail/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.live}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        emails: Array.from({ length: 25 }, (_, i) => ({
          from: 'news@acme.test',
          to: `reader${i}@example.com`,
          subject: `Newsletter ${i + 1}`,
          text: 'news',
        })),
      }),
    });
    expect(batch.status).toBe(200);
    // Wait on what a person sees, the rows; the range label must then already describe those same rows.
    const range = page.getByTestId('pager-range');
    // The batch reaches the outbox through the job workers: the page may show some of it first.
    await page.getByRole('button', { name: 'Refresh now' }).click();
    await expect
      .poll(async () => [await rows().count(), await rows().filter({ hasText: 'Welcome to Acme' }).count()], {
        timeout: 15_000,
      })
      .toEqual([25, 0]);
    expect(await range.textContent()).toBe('1–25 of 26 messages');
    await page.getByRole('button', { name: 'Next' }).click();
    await rows().filter({ hasText: 'Welcome to Acme' }).waitFor();
    expect(await rows().count()).toBe(1);
    expect(await range.textContent()).toBe('26–26 of 26 messages');
    await page.getByRole('button', { name: 'Previous' }).click();
    await rows().filter({ hasText: 'Newsletter 25' }).waitFor();
    expect(await rows().count()).toBe(25);
    expect(await range.textContent()).toBe('1–25 of 26 messages');

    // While the next page is on its way, the rows on screen and the label describe the same page: hold
    // page 2's answer back and look. Auto-refresh is paused so that no other request overtakes the held one.
    await page.getByRole('button', { name: 'Pause auto-refresh' }).click();
    const holds: { offset: number; release: () => void }[] = [];
    const holding = new Set<number>();
    await page.route('**/api/fn/listOutboxForCli', async (route) => {
      const offset = (route.request().postDataJSON() as { offset?: number }).offset ?? 0;
      if (holding.has(offset)) {
        holding.delete(offset);
        await new Promise<void>((release) => holds.push({ offset, release }));
      }
      await route.continue();
    });
    const answered = (offset: number) =>
      page.waitForResponse(
        (r) =>
          r.url().endsWith('/api/fn/listOutboxForCli') &&
          (r.request().postDataJSON() as { offset?: number }).offset === offset,
      );
    holding.add(25);
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => holds.length).toBe(1);
    await page.waitForTimeout(200);
    expect(await rows().count()).toBe(25);
    expect(await range.textContent()).toBe('1–25 of 26 messages');
    const page2 = answered(25);
    holds.shift()!.release();
    await page2;
    await rows().filter({ hasText: 'Welcome to Acme' }).waitFor();
    expect(await range.textContent()).toBe('26–26 of 26 messages');

    // A slow answer to an older request never overwrites a newer page: page 2's refresh is held back until
    // page 1 is on screen again, then let through.
    holding.add(25);
    await page.getByRole('button', { name: 'Refresh now' }).click();
    await expect.poll(() => holds.length).toBe(1);
    await page.getByRole('button', { name: 'Previous' }).click();
    await rows().filter({ hasText: 'Newsletter 25' }).waitFor();
    const late = answered(25);
    holds.shift()!.release();
    await late;
    await page.waitForTimeout(300);
    expect(await rows().count()).toBe(25);
    expect(await range.textContent()).toBe('1–25 of 26 messages');
    await page.unroute('**/api/fn/listOutboxForCli');
    await page.getByRole('button', { name: 'Resume auto-refresh' }).click();

    await page.getByLabel('Search').fill('reader7@');
    // Newsletter 8 is on the unfiltered page too: wait for the filtered rows themselves.
    await expect.poll(() => rows().count(), { timeout: 15_000 }).toBe(1);
    expect(await rows().first().textContent()).toContain('Newsletter 8');
    expect(await range.textContent()).toBe('1–1 of 1 message');
    await page.getByLabel('Search').fill('WELCOME');
    await rows().filter({ hasText: 'Welcome to Acme' }).waitFor();
    expect(await rows().count()).toBe(1);
    // Rows open from the keyboard too.
    await rows().first().focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Welcome to Acme' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('mail-subject');
    await page.getByRole('button', { name: 'Close message' }).click();
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No messages match.').waitFor();
    await page.getByLabel('Status').selectOption('delivered');
    await rows().filter({ hasText: 'Welcome to Acme' }).waitFor();
    await page.getByLabel('Search').fill('');
    await rows().filter({ hasText: 'Newsletter 25' }).waitFor();
    expect(await range.textContent()).toBe('1–25 of 26 messages');
  });

  it('stops refreshing while paused', async () => {
    await page.getByRole('button', { name: 'Pause auto-refresh' }).click();
    expect(await page.getByRole('button', { name: 'Resume auto-refresh' }).getAttribute('aria-pressed')).toBe(
      'true',
    );
    const { id } = await sendMail(a.live, { subject: 'While paused', text: 'later' });
    // Wait until the outbox has it, then longer than one refresh period: the list must not change.
    for (let i = 0; i < 50; i++) {
      const got = await callFn(
        base,
        'listOutboxForCli',
        { orgSlug: a.org.slug, search: 'While paused' },
        a.owner.token,
      );
      if ((got.body.total as number) > 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await page.waitForTimeout(6000);
    expect(await rows().filter({ hasText: 'While paused' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume auto-refresh' }).click();
    await rows().filter({ hasText: 'While paused' }).waitFor();
    expect(id).toBeTruthy();
  });

  it("another organization's owner sees only their own, empty inbox", async () => {
    const other = await seedV1Tenant(t.deps);
    await setPassword(other.owner.user.id);
    const ctx2 = await browser.newContext();
    const p2 = await ctx2.newPage();
    p2.setDefaultTimeout(15_000);
    await p2.goto(`${base}/inbox`);
    await p2.waitForURL(/\/sign-in/);
    await signIn(p2, other.owner.user.email);
    await p2.getByText('No production mail in the outbox yet.').waitFor();
    await p2.setViewportSize({ width: 390, height: 844 });
    await shot(p2, 'inbox-04-empty-mobile');
    const theirs = await callFn(base, 'listOutboxForCli', { orgSlug: a.org.slug }, other.owner.token);
    expect(theirs.status).toBe(404);
    await ctx2.close();
  });
});
