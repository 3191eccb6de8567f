import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../../src/areas/integrations/sync-run.ts';
import { createSync } from '../../../src/areas/integrations/syncs.ts';
import { integrationConnections } from '../../../src/areas/integrations/tables.ts';
import { startHubspot } from '../../fakes/integration-providers.ts';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { providerEnv } from '../../integrations-kit.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// The integrations page in headless Chromium: an owner sees the connectors (configured or not, with the
// variables an unconfigured one needs), presses Connect on HubSpot, goes through the fake provider's consent
// and Pier's callback, comes back to the page with the outcome, and tests the new connection; its sync's
// last run and runs show their counts.

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

    // A sync of its contacts (set up through the service, as the API would): its last run's counts, its runs.
    for (const id of ['1', '2', '3'])
      hubspot.store.contacts.push({
        id,
        properties: { firstname: `F${id}`, email: `c${id}@acme.test` },
        createdAt: new Date().toISOString(),
        updatedAt: new Date().toISOString(),
        archived: false,
      });
    const [conn] = await t.deps.db.orm.select().from(integrationConnections);
    const scope = { orgId: conn!.orgId, environment: conn!.environment };
    const sync = await createSync(t.deps, scope, {
      connectionId: conn!.id,
      model: 'contacts',
      frequencyMinutes: 60,
    });
    await runSync(t.deps, sync.id);
    await page.getByRole('region', { name: 'Syncs' }).getByRole('button', { name: 'Refresh' }).click();
    const syncRow = page.getByRole('table', { name: 'Syncs' }).getByRole('row', { name: /hubspot/ });
    await syncRow.getByText('succeeded: +3 ~0 -0', { exact: false }).waitFor();
    await syncRow.getByRole('button', { name: /Runs of the contacts sync/ }).click();
    const runs = page.getByRole('table', { name: 'Sync runs' });
    await runs.getByRole('row', { name: /succeeded/ }).waitFor();
    await shot(page, 'integrations');
    expect(hubspot.tokenGrants.map((g) => g.grant)).toContain('authorization_code');
  });
});
