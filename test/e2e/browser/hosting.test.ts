import { eq } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostingRuntime } from '../../../src/areas/hosting/index.ts';
import { appLogs, deployments } from '../../../src/areas/hosting/runtime/tables.ts';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { seedProject } from '../../seed.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// What the project page shows about hosting (issue 15), in headless Chromium against a real Pier: the
// plan's limits and what enforces them, the build log of a deployment growing while it builds and then its
// failure reason, and — on a Pier with APP_SANDBOX=off — the banner saying apps run unsandboxed.

let browser: Browser;
const started: TestApp[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  for (const t of started) await t.close();
});

/** A Pier, a signed-in owner of an organization with one project, and a page. */
async function ownerOnPier(env: Record<string, string>, hosting: boolean) {
  const { t, base } = await startPier(env, { hosting });
  started.push(t);
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  page.setDefaultTimeout(30_000);
  const email = `${uniq('host')}@example.com`;
  const { org } = await signUpIntoOrg(page, t, base, email, 'admin');
  const project = await seedProject(t.deps, org);
  return { t, base, page, project };
}

const line = (
  projectId: string,
  deploymentId: string,
  text: string,
  stream: 'stdout' | 'stderr' = 'stdout',
) => ({
  projectId,
  deploymentId,
  ts: new Date(),
  stream,
  line: text,
});

describe('hosting on the project page', { timeout: 120_000 }, () => {
  it('shows the limits and their enforcement, and a deployment build log live, then its failure reason', async () => {
    const { t, base, page, project } = await ownerOnPier({}, true);
    const at = new Date();
    const [d] = await t.deps.db.orm
      .insert(deployments)
      .values({
        projectId: project.id,
        orgId: project.orgId,
        status: 'building',
        artifactKey: 'artifacts/x.tar.gz',
        createdBy: 'user:test',
        createdAt: at,
        uploadExpiresAt: at,
      })
      .returning();
    await t.deps.db.orm
      .insert(appLogs)
      .values([
        line(project.id, d!.id, '> npm ci --include=dev'),
        line(project.id, d!.id, 'added 1 package'),
      ]);
    await page.goto(`${base}/projects/${project.slug}`);

    const limits = page.getByTestId('app-limits');
    await limits.waitFor();
    const text = await limits.textContent();
    for (const want of ['free', '512 MB', '128', '1,024', '1 GB', '0.5 core']) expect(text).toContain(want);
    const mode = hostingRuntime(t.deps)!.sandbox!.kind === 'v1' ? 'cgroups' : 'rlimits';
    await page.getByTestId('limits-enforced').getByText(`enforced by ${mode}`).waitFor();
    expect(await page.getByTestId('sandbox-off').count()).toBe(0);

    // The newest deployment is building: its view is open and its log grows as lines arrive.
    const log = page.getByTestId('deployment-log');
    await log.getByText('added 1 package').waitFor();
    expect(await page.getByTestId('deployment-status').textContent()).toBe('building');
    await t.deps.db.orm
      .insert(appLogs)
      .values([
        line(project.id, d!.id, '> npm run build'),
        line(project.id, d!.id, 'npm error Missing script: "build"', 'stderr'),
      ]);
    await log.getByText('[stderr] npm error Missing script: "build"').waitFor();
    await shot(page, 'hosting-01-building');

    // It fails: the view shows the reason, and so does the list.
    const reason = 'The build failed (exit code 1):\nnpm error Missing script: "build"';
    await t.deps.db.orm
      .update(deployments)
      .set({ status: 'failed', errorMessage: reason, finishedAt: new Date() })
      .where(eq(deployments.id, d!.id));
    await page.getByTestId('deployment-status').getByText('failed').waitFor();
    expect(await page.getByTestId('deployment-reason').textContent()).toBe(reason);
    expect(await log.textContent()).toContain('> npm ci --include=dev');
    await shot(page, 'hosting-02-failed');

    // Another deployment's view opens from the list.
    const [old] = await t.deps.db.orm
      .insert(deployments)
      .values({
        projectId: project.id,
        orgId: project.orgId,
        status: 'crashed',
        artifactKey: 'artifacts/y.tar.gz',
        errorMessage: 'Crashed: the app exited 5 times within 10 minutes (last: out of memory, SIGKILL)',
        createdBy: 'user:test',
        createdAt: new Date(at.getTime() - 60_000),
        uploadExpiresAt: at,
      })
      .returning();
    await page.reload();
    await page.getByRole('button', { name: `Show deployment ${old!.id.slice(0, 8)}` }).click();
    await page
      .getByTestId('deployment-reason')
      .getByText(/last: out of memory/)
      .waitFor();
    expect(await page.getByTestId('deployment-status').textContent()).toBe('crashed');
  });

  it('shows a banner when APP_SANDBOX=off', async () => {
    const { base, page, project } = await ownerOnPier({ APP_SANDBOX: 'off' }, false);
    await page.goto(`${base}/projects/${project.slug}`);
    const banner = page.getByTestId('sandbox-off');
    await banner.waitFor();
    expect(await banner.textContent()).toMatch(/run without a sandbox \(APP_SANDBOX=off\)/);
    await page.getByTestId('limits-enforced').getByText('not enforced').waitFor();
    await shot(page, 'hosting-03-sandbox-off');
  });
});
