import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appLogs } from '../../../src/areas/hosting/runtime/tables.ts';
import { issuePersonalToken } from '../../../src/areas/identity/index.ts';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { deploy, fixtures, packDir, settle, viaRouter, waitFor } from '../../hosting.ts';
import { seedProject } from '../../seed.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// The project page's deployments list (issue 34) in headless Chromium against a real Pier: kind and who
// deployed, Roll back and Redeploy buttons that really change what the app serves, and the live log view with
// its colours rendered and its Build / Runtime filter.

let browser: Browser;
let t: TestApp;
let base: string;
beforeAll(async () => {
  browser = await launchBrowser();
  ({ t, base } = await startPier({ APPS_DOMAIN: 'apps.test' }, { hosting: true }));
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

function site(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-site-'));
  fs.cpSync(path.join(fixtures, 'static-site'), dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.html'), `<h1>${text}</h1>`);
  return dir;
}

describe('deployments on the project page', { timeout: 120_000 }, () => {
  it('rolls back and redeploys from the list, and streams coloured logs apart by phase', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1300, height: 900 } })).newPage();
    page.setDefaultTimeout(30_000);
    const email = `${uniq('rel')}@example.com`;
    const { org, userId } = await signUpIntoOrg(page, t, base, email, 'admin');
    const project = await seedProject(t.deps, org);
    const { token } = await issuePersonalToken(t.deps, userId, 'test');
    const router = { ...t, url: base } as TestApp;
    const served = async () => (await viaRouter(router, project.slug, '/')).body;
    const ids: string[] = [];
    for (const text of ['first site', 'second site']) {
      const { id } = await deploy(t, token, project.slug, await packDir(site(text)));
      expect((await settle(t, token, id)).status).toBe('live');
      ids.push(id);
    }
    await t.deps.db.orm.insert(appLogs).values([
      {
        projectId: project.id,
        deploymentId: ids[1]!,
        ts: new Date(),
        stream: 'stderr',
        phase: 'build',
        line: '\x1b[31mbuild warning\x1b[39m',
      },
      {
        projectId: project.id,
        deploymentId: ids[1]!,
        ts: new Date(),
        stream: 'stdout',
        phase: 'runtime',
        line: '\x1b[1;32mGET / 200\x1b[0m',
      },
    ]);

    await page.goto(`${base}/projects/${project.slug}`);
    const first = page.getByTestId(`deployment-${ids[0]}`);
    await first.waitFor();
    expect(await first.textContent()).toContain(email);
    expect(await first.textContent()).toContain('static');

    // Live log: colours rendered as spans, no escape codes; Build shows the build's lines only.
    const logs = page.getByTestId('app-logs');
    await logs.getByText('GET / 200').waitFor();
    expect(await logs.textContent()).not.toContain('\x1b');
    expect(await logs.locator('span.ansi-32.ansi-bold').textContent()).toBe('GET / 200');
    expect(await logs.locator('span.ansi-31').textContent()).toBe('build warning');
    await page.getByRole('button', { name: 'Build', exact: true }).click();
    await waitFor('build lines only', async () => !(await logs.textContent())?.includes('GET / 200'));
    expect(await logs.textContent()).toContain('build warning');
    await page.getByRole('button', { name: 'Runtime', exact: true }).click();
    await waitFor('runtime lines only', async () => !(await logs.textContent())?.includes('build warning'));
    await shot(page, 'releases-01-list');

    // Roll back to the first: a new deployment, live, serving the first site again.
    await first.getByRole('button', { name: 'Roll back' }).click();
    await page.getByText(`rollback of ${ids[0]!.slice(0, 8)}`).waitFor();
    await waitFor('the first site back', async () => (await served()).includes('first site'));
    await page.getByTestId('deployment-status').getByText('live').waitFor();
    await shot(page, 'releases-02-rolled-back');

    // Redeploy the second from its artifact: built again, live, serving the second site.
    await page.reload();
    await page.getByTestId(`deployment-${ids[1]}`).getByRole('button', { name: 'Redeploy' }).click();
    await page.getByText(`redeploy of ${ids[1]!.slice(0, 8)}`).waitFor();
    await waitFor('the second site back', async () => (await served()).includes('second site'));
  });
});
