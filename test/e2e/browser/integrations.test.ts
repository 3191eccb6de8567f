import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubspot } from '../../fakes/integration-providers.ts';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { providerEnv } from '../../integrations-kit.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// The integrations page in headless Chromium: an owner sees the connectors (configured or not, with the
// variables an unconfigured one needs), presses Connect on HubSpot, goes through the fake provider's consent
// and Pier's callback, comes back to the page with the outcome, and tests the new connection.

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;
let hubspot: Awaited<ReturnType<typeof startHubspot>>;
const email = `${uniq('int')}@example.com`;

beforeAll(async () => {
  hubspot = await startHubspot();
  const stub = { url: hubspot.url };
  ({ t, base } = await startPier(providerEnv({ hubspot, slack: stub, drive: stub, notion: stub } as never)));
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  page.setDefaultTimeout(15_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await hubspot?.close();
});

describe('integrations page in a browser', () => {
  it('lists connectors and runs Connect against a fake provider', async () => {
    await signUpIntoOrg(page, t, base, email, 'admin');

    await page.goto(`${base}/integrations`);
    await page.getByRole('link', { name: 'Integrations' }).waitFor();
    const connectors = page.getByRole('table', { name: 'Connectors' });
    await connectors
      .getByRole('row', { name: /HubSpot/ })
      .getByText('configured')
      .waitFor();
    await connectors
      .getByRole('row', { name: /Dropbox/ })
      .getByText(/INTEGRATIONS_DROPBOX_CLIENT_ID/)
      .waitFor();
    await page.getByText('No connections in production yet.').waitFor();
    expect(await page.getByTestId('connections-empty').textContent()).toContain(
      '$PIER_URL/v1/integrations/connections',
    );

    await page.getByRole('button', { name: 'Connect HubSpot' }).click();
    await page.getByTestId('connect-outcome').waitFor();
    expect(await page.getByTestId('connect-outcome').textContent()).toContain('Connected');
    expect(new URL(page.url()).pathname).toBe('/integrations');
    expect(new URL(page.url()).searchParams.get('status')).toBe('success');

    const row = page.getByRole('table', { name: 'Connections' }).getByRole('row', { name: /hubspot/ });
    await row.getByText('connected').waitFor();
    await row.getByText('dashboard-test').waitFor();
    await row.getByRole('button', { name: 'Test' }).click();
    await row.getByTestId('test-result').getByText('works').waitFor();
    // The connection's provider calls: the account reads of connecting and of the test, paths and statuses.
    await row.getByRole('button', { name: /Provider calls of hubspot/ }).click();
    const calls = page.getByRole('table', { name: 'Provider calls' });
    await calls.getByRole('row').nth(1).waitFor();
    expect(await calls.getByRole('row').count()).toBeGreaterThanOrEqual(3);
    expect(await calls.textContent()).toMatch(/GET.*\/.*200/);
    await shot(page, 'integrations');
    expect(hubspot.tokenGrants.map((g) => g.grant)).toContain('authorization_code');
  });
});
