import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubspot } from '../../fakes/integration-providers.ts';
import type { TestApp } from '../../harness.ts';
import { providerEnv } from '../../integrations-kit.ts';
import { seedV1Tenant } from '../../seed.ts';
import { type V1Client, v1Client } from '../../v1-client.ts';
import { launchBrowser, shot, startPier } from './browser-kit.ts';

// The hosted Connect page in headless Chromium at 390 px, driven from the keyboard only: an end user picks
// HubSpot (the fake's consent screen approves at once) and lands back on the app; then enters a Freshsales
// subdomain and key and lands back on the app with the new connection.

let t: TestApp;
let browser: Browser;
let page: Page;
let api: V1Client;
let hubspot: Awaited<ReturnType<typeof startHubspot>>;
let app: http.Server;
let appUrl: string;

beforeAll(async () => {
  hubspot = await startHubspot();
  const stub = { url: hubspot.url };
  ({ t } = await startPier(providerEnv({ hubspot, slack: stub, drive: stub, notion: stub } as never)));
  api = v1Client(t, (await seedV1Tenant(t.deps)).live);
  // The app the end user comes back to.
  app = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>App</title><p id="back">${req.url}</p>`);
  });
  await new Promise<void>((ok) => app.listen(0, '127.0.0.1', ok));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/connected`;
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
  page.setDefaultTimeout(15_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await hubspot?.close();
  app?.close();
});

async function session(allowed: string[]): Promise<string> {
  const r = await api.post('/integrations/connect-sessions', {
    endUserId: 'browser-user',
    redirectUrl: appUrl,
    allowedConnectors: allowed,
    theme: { name: 'Acme CRM sync', primaryColor: '#0b7a4b' },
  });
  expect(r.statusCode, r.body).toBe(201);
  return r.json().url;
}

/** Tabs until the focused element's text matches, then presses Enter. */
async function tabTo(p: Page, text: RegExp): Promise<void> {
  for (let i = 0; i < 30; i++) {
    await p.keyboard.press('Tab');
    const focused = await p.evaluate(() => document.activeElement?.textContent ?? '');
    if (text.test(focused)) return p.keyboard.press('Enter');
  }
  throw new Error(`nothing focusable matched ${text}`);
}

const noSideScroll = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

describe('Connect page in a browser', () => {
  it('connects an OAuth and a key provider from the keyboard at 390 px and returns to the app', async () => {
    await page.goto(await session(['hubspot', 'freshsales']));
    await page.getByRole('heading', { name: 'Acme CRM sync' }).waitFor();
    expect(await noSideScroll(page)).toBe(true);
    await shot(page, 'connect-page-390');
    await tabTo(page, /^HubSpot$/);
    await page.waitForURL((u) => u.toString().startsWith(appUrl));
    const back = new URL(page.url());
    expect(back.searchParams.get('status')).toBe('success');
    expect(back.searchParams.get('connectionId')).toMatch(/^[0-9a-f-]{36}$/);

    await page.goto(await session(['hubspot', 'freshsales']));
    await tabTo(page, /^Freshsales$/);
    await page.getByLabel(/Freshworks domain/).waitFor();
    expect(await noSideScroll(page)).toBe(true);
    // Focus moves through the form in order: the domain, the key, the button.
    await page.keyboard.press('Tab');
    await page.keyboard.type('acme');
    await page.keyboard.press('Tab');
    await page.keyboard.type('fs-secret-key');
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.toString().startsWith(appUrl));
    const id = new URL(page.url()).searchParams.get('connectionId');
    const conns = (await api.get('/integrations/connections')).json().data as {
      id: string;
      connectorSlug: string;
    }[];
    expect(conns.find((c) => c.id === id)).toMatchObject({ connectorSlug: 'freshsales' });
    expect(conns.map((c) => c.connectorSlug).sort()).toEqual(['freshsales', 'hubspot']);

    await page.goto(`${new URL(await session(['hubspot'])).origin}/v1/integrations/connect?session=altered`);
    await page
      .getByRole('alert')
      .getByText(/not valid/)
      .waitFor();
  });
});
