import { spawn } from 'node:child_process';
import { eq } from 'drizzle-orm';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appLogs, deployments } from '../../../src/areas/hosting/runtime/tables.ts';
import { projects } from '../../../src/areas/orgs/tables.ts';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { seedOperator } from '../../seed.ts';
import { mailedToken } from '../../system-mail.ts';
import { CLI_MAIN, json, NODE24, pier, removeScratchHomes, scratchHome } from '../cli-helpers.ts';
import { callFn, launchBrowser, shot, startPier } from './browser-kit.ts';

// The dashboard end to end in headless Chromium against a real Pier on a real port. The tests share one
// owner account (created by the first test through the sign-up page) and run in order.

let t: TestApp;
let base: string;
let browser: Browser;
const PASSWORD = 'a long enough password';
const owner = { email: `${uniq('owner')}@example.com`, org: uniq('org') };
let ownerCtx: BrowserContext;
let page: Page;
/** The project the secrets test creates; the deployments test reuses it. */
let shopSlug = '';

beforeAll(async () => {
  ({ t, base } = await startPier());
  browser = await launchBrowser();
  ownerCtx = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  page = await ownerCtx.newPage();
  page.setDefaultTimeout(10_000);
});
afterAll(async () => {
  removeScratchHomes();
  await browser?.close();
  await t?.close();
});

async function signIn(p: Page, email: string, password: string) {
  await p.getByLabel('E-mail').fill(email);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

describe('dashboard in a browser', () => {
  it('signs up, creates an organization, and lands on its projects', async () => {
    await page.goto(`${base}/`);
    await page.waitForURL(/\/sign-in/);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('E-mail').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await shot(page, '01-sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    // Until the address is verified the account sees only this page; the link came by mail.
    await page.getByRole('heading', { name: 'Verify your e-mail' }).waitFor();
    expect(await page.getByTestId('verify-email-address').textContent()).toBe(owner.email);
    await shot(page, '01b-verify-email');
    await page.goto(`${base}/verify-email#token=${await mailedToken(t.deps, owner.email, 'verify-email')}`);
    await page.getByRole('heading', { name: 'Welcome to Pier' }).waitFor();
    await shot(page, '02-welcome-no-org');
    await page.getByRole('link', { name: 'Create an organization' }).click();
    await page.getByLabel('Name').fill('Acme Bakery');
    await page.getByLabel('Slug').fill(owner.org);
    await shot(page, '03-new-org');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await page.getByText('No projects yet.').waitFor();
    expect(await page.getByTestId('signed-in-as').textContent()).toBe(owner.email);
  });

  it('signs out, refuses a wrong password with a generic message, and signs in', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    // The old session is gone: a dashboard page sends us back to sign-in.
    await page.goto(`${base}/tokens`);
    await page.waitForURL(/\/sign-in\?next=%2Ftokens/);
    await signIn(page, owner.email, 'not the password');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('The e-mail or password is not right.');
    await shot(page, '04-sign-in-wrong-password');
    // Keyboard only: Tab moves from e-mail to password, Enter submits.
    await page.getByLabel('E-mail').fill('');
    await page.getByLabel('E-mail').focus();
    await page.keyboard.type(owner.email);
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Personal tokens' }).waitFor();
  });

  it('creates a token that works against listMyOrgsForCli, then revokes it (401)', async () => {
    await page.goto(`${base}/tokens`);
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.getByTestId('shown-once').textContent())!;
    expect(token).toMatch(/^pk\./);
    // The MCP card's configuration holds the token just minted (docs/mcp.md).
    const mcpConfig = await page.locator('section[aria-labelledby="mcp-heading"] pre').first().textContent();
    expect(JSON.parse(mcpConfig!).mcpServers.pier).toEqual({
      type: 'http',
      url: `${base}/mcp`,
      headers: { Authorization: `Bearer ${token}` },
    });
    await shot(page, '05-tokens-created');
    const orgs = await callFn(base, 'listMyOrgsForCli', {}, token);
    expect(orgs.status).toBe(200);
    expect(orgs.body).toEqual([expect.objectContaining({ slug: owner.org, role: 'owner' })]);
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: /^Rename dashboard / }).click();
    await page.getByLabel('New label').fill('laptop script');
    await page.getByRole('button', { name: 'Save' }).click();
    const renamed = page.locator('tbody tr', { hasText: 'laptop script' });
    await renamed.waitFor();
    await renamed.getByRole('button', { name: 'Revoke' }).click();
    await shot(page, '06-tokens-revoke-confirm');
    await renamed.getByRole('button', { name: 'Yes, revoke' }).click();
    await renamed.waitFor({ state: 'detached' });
    const after = await callFn(base, 'listMyOrgsForCli', {}, token);
    expect(after.status).toBe(401);
  });

  it('mints a code on the hand-off card that exchangeCliAuthCode redeems', async () => {
    await page.goto(`${base}/cli`);
    const codeEl = page.getByTestId('login-code');
    await codeEl.waitFor();
    const code = (await codeEl.textContent())!;
    expect(code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    expect(await page.getByTestId('handoff-email').textContent()).toBe(owner.email);
    expect(await page.getByTestId('countdown').textContent()).toMatch(/^Expires in [45]:\d\d$/);
    await shot(page, '07-cli-hand-off');
    const redeemed = await callFn(base, 'exchangeCliAuthCode', { code: code.toLowerCase() });
    expect(redeemed.status).toBe(200);
    expect(redeemed.body.user).toMatchObject({ email: owner.email });
    expect((await callFn(base, 'whoamiForCli', {}, redeemed.body.token as string)).status).toBe(200);
    await page.getByRole('button', { name: 'Mint another code' }).click();
    await page.waitForFunction(
      (old) => document.querySelector('[data-testid="login-code"]')?.textContent !== old,
      code,
    );
  });

  it('approves a real `pier login` browser flow, signing in first', async () => {
    // The real CLI as a child process; PIER_BROWSER=true opens nothing, so we read the URL it prints.
    const home = scratchHome();
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home.home,
      XDG_CONFIG_HOME: home.configHome,
      DATA_DIR: home.dataDir,
      PIER_URL: base,
      PIER_BROWSER: 'true',
    };
    const cli = spawn(NODE24, [CLI_MAIN, 'login', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    cli.stdout.on('data', (d) => {
      stdout += d;
    });
    const exited = new Promise<number | null>((resolve) => cli.on('close', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      cli.stderr.on('data', (d) => {
        stderr += d;
        const m = /(http:\/\/\S+\/cli\/login\?\S+)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      cli.on('close', () => reject(new Error(`pier login exited: ${stderr}`)));
    });
    expect(new URL(url).searchParams.get('callback')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);

    // A browser that is not signed in yet: sign in first, come back to the approval page.
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    p.setDefaultTimeout(10_000);
    await p.goto(url);
    await p.waitForURL(/\/sign-in\?next=/);
    await p.getByText('Sign in to approve the command-line login').waitFor();
    await signIn(p, owner.email, PASSWORD);
    await p.getByRole('heading', { name: 'Approve command-line sign-in' }).waitFor();
    const device = new URL(url).searchParams.get('device')!;
    expect(await p.getByTestId('device').textContent()).toBe(device);
    expect(await p.getByTestId('device-ip').textContent()).toBe('127.0.0.1');
    expect(await p.getByRole('note').textContent()).toMatch(/Only approve a request you started yourself/);
    await shot(p, '08-cli-approve');
    await p.getByRole('button', { name: 'Approve sign-in' }).click();
    await p.waitForURL(/127\.0\.0\.1:\d+\/callback\?/);
    await p.getByText('Pier CLI logged in').waitFor();
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      url: base,
      user: { email: owner.email },
      label: `cli ${device}`,
    });
    // The CLI now holds a working token.
    const who = json<{ user: { email: string } }>(await pier(['whoami', '--json'], { url: base, home }));
    expect(who.user.email).toBe(owner.email);
    await ctx.close();

    // A callback that is not on this computer is refused outright.
    const bad = new URL(url);
    bad.searchParams.set('callback', 'https://evil.example/callback');
    await page.goto(bad.toString());
    await page.getByText('The callback is not on this computer').waitFor();
    expect(await page.getByRole('button', { name: 'Approve sign-in' }).count()).toBe(0);
  });

  it('creates a project, sets and removes a write-only secret', async () => {
    const slug = uniq('shop');
    shopSlug = slug;
    await page.goto(`${base}/projects`);
    await page.getByLabel('Name').fill('Shop');
    await page.getByLabel('Slug').fill(slug);
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByTestId('project-status').waitFor();
    expect(await page.getByTestId('project-status').textContent()).toBe('ready');
    await page.getByText('No deployments yet.').waitFor();

    const secretValue = `sk_${uniq('v')}`;
    await page.getByLabel('Key').fill('STRIPE_KEY');
    await page.getByLabel('Value').fill(secretValue);
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page.getByTestId('secret-STRIPE_KEY').waitFor();
    expect(await page.content()).not.toContain(secretValue);
    await shot(page, '09-project-secrets');
    const listed = await t.call('listSecretsForCli', { projectSlug: slug }, undefined, {});
    expect(listed.statusCode).toBe(401);

    await page.getByTestId('secret-STRIPE_KEY').getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await page.getByTestId('secret-STRIPE_KEY').waitFor({ state: 'detached' });
    await page.getByText('No secrets yet.').waitFor();
  });

  it("shows a project's deployments with the failure reason and the app's recent logs", async () => {
    const [project] = await t.deps.db.orm.select().from(projects).where(eq(projects.slug, shopSlug));
    const at = new Date();
    const [failed] = await t.deps.db.orm
      .insert(deployments)
      .values({
        projectId: project!.id,
        orgId: project!.orgId,
        status: 'failed',
        artifactKey: 'deployments/x.tar.gz',
        errorMessage: 'The health check at / did not answer 200 within 30 s.',
        createdBy: 'user:test',
        createdAt: at,
        uploadExpiresAt: at,
      })
      .returning();
    await t.deps.db.orm.insert(appLogs).values([
      {
        projectId: project!.id,
        deploymentId: failed!.id,
        ts: at,
        stream: 'stdout',
        line: 'listening on 3000',
      },
      { projectId: project!.id, deploymentId: failed!.id, ts: at, stream: 'stderr', line: 'Error: boom' },
      {
        projectId: project!.id,
        deploymentId: failed!.id,
        ts: at,
        stream: 'system',
        line: 'health check failed',
      },
    ]);
    await page.goto(`${base}/projects/${shopSlug}`);
    await page.getByText(failed!.id.slice(0, 8)).waitFor();
    expect(await page.getByText('The health check at / did not answer 200 within 30 s.').count()).toBe(1);
    const logs = await page.getByTestId('app-logs').textContent();
    expect(logs).toContain('listening on 3000');
    expect(logs).toContain('[stderr] Error: boom');
    expect(logs).toContain('[system] health check failed');
    await shot(page, '09b-project-deployments');
  });

  it('invites a member who sets a password and sees the restricted view', async () => {
    const email = `${uniq('member')}@example.com`;
    await page.goto(`${base}/members`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Invite' }).click();
    // The set-password link goes to the invitee by mail, not to the inviter's screen.
    await page.getByTestId('invite-pending').waitFor();
    const inviteUrl = `${base}/set-password#token=${await mailedToken(t.deps, email, 'set-password')}`;
    const row = page.getByTestId(`member-${email}`);
    await row.waitFor();
    expect(await row.getByLabel(`Role of ${email}`).inputValue()).toBe('member');
    await shot(page, '10-members-owner');

    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const p = await ctx.newPage();
    p.setDefaultTimeout(10_000);
    await p.goto(inviteUrl);
    await p.getByTestId('link-email').waitFor();
    expect(await p.getByTestId('link-email').textContent()).toBe(email);
    await shot(p, '11-set-password-mobile');
    await p.getByLabel('New password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Set password and sign in' }).click();
    await p.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await p.goto(`${base}/members`);
    await p.getByText('Only owners and admins can invite or change members.').waitFor();
    expect(await p.getByRole('button', { name: 'Invite' }).count()).toBe(0);
    expect(await p.getByRole('button', { name: 'Remove' }).count()).toBe(0);
    await shot(p, '12-members-member-mobile');
    // Narrow screens fold the sidebar's pages behind "Menu"; choosing one closes it again.
    expect(await p.getByRole('link', { name: 'Projects' }).isVisible()).toBe(false);
    await p.getByText('Menu', { exact: true }).click();
    await p.getByRole('link', { name: 'Projects' }).click();
    await p.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    // The menu closes on the next render after the navigation: polled, not read once.
    await expect.poll(() => p.getByRole('link', { name: 'Members' }).isVisible()).toBe(false);
    await p.getByText('Menu', { exact: true }).click();
    await p.getByRole('link', { name: 'Projects' }).click();
    await p.getByRole('link', { name: 'Shop' }).click();
    await p.getByText('Only owners and admins can change secrets.').waitFor();
    expect(await p.getByRole('button', { name: 'Save secret' }).count()).toBe(0);

    // At 360 px every entry of the sidebar is reachable and nothing scrolls sideways.
    await p.setViewportSize({ width: 360, height: 740 });
    await p.getByText('Menu', { exact: true }).click();
    const nav = p.getByRole('navigation', { name: 'Main' });
    const labels = await nav.getByRole('link').allTextContents();
    expect(labels).toEqual([
      'Members',
      'API keys',
      'AI spend',
      'Projects',
      'Dev inbox',
      'Sender domains',
      'Memory',
      'Assets',
      'Integrations',
      'Workflows',
      'Web data',
      'Tokens',
      'CLI sign-in',
    ]);
    for (const name of labels) expect(await nav.getByRole('link', { name }).isVisible()).toBe(true);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot(p, '12b-menu-360');
    await ctx.close();
  });

  it('lets a person with an operator link (`pier admin user invite-link`) set a password', async () => {
    const email = `${uniq('op-invited')}@example.com`;
    const home = scratchHome();
    const operatorKey = (await seedOperator(t.deps)).token;
    const link = json<{ url: string; email: string }>(
      await pier(['admin', 'user', 'invite-link', '--email', email, '--json'], {
        url: base,
        home,
        env: { PIER_OPERATOR_KEY: operatorKey },
      }),
    );
    expect(link.email).toBe(email);
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    p.setDefaultTimeout(10_000);
    await p.goto(link.url);
    await p.getByLabel('New password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Set password and sign in' }).click();
    await p.getByRole('heading', { name: 'Welcome to Pier' }).waitFor();
    // The link works once.
    await p.goto(link.url);
    await p.getByText('That link is not valid any more').waitFor();
    await ctx.close();
  });

  it('creates a test API key shown once, lists it and revokes it; a key with its own rate limit shows it', async () => {
    await page.goto(`${base}/api-keys`);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    // Before the v1 API existed this page showed an empty state (FUNCTION_NOT_FOUND); now it is live.
    await page.getByLabel('Kind').selectOption('test');
    await page.getByLabel('Label (optional)').fill('staging site');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.getByTestId('shown-once').textContent())!;
    expect(key).toMatch(/^sk_test\./);
    await shot(page, '13-api-keys-created');
    expect(await t.deps.credentials.verify(key)).not.toBeNull();
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.locator('tbody tr', { hasText: 'staging site' });
    await row.waitFor();
    expect(await row.textContent()).toContain('plan default');
    // A key with its own v1 limit shows it.
    await page.getByLabel('Label (optional)').fill('batch importer');
    await page.getByLabel('Requests per second (optional)').fill('5');
    await page.getByLabel('Burst (optional)').fill('20');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByRole('button', { name: 'Done' }).click();
    const limited = page.locator('tbody tr', { hasText: 'batch importer' });
    await limited.getByText('5/s, burst 20').waitFor();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await t.deps.credentials.verify(key)).toBeNull();
  });

  it('rejects a state-changing call made with the cookie but without the CSRF token', async () => {
    const res = await page.evaluate(async () => {
      const r = await fetch('/api/fn/createTokenForCli', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      return { status: r.status, body: await r.json() };
    });
    expect(res).toEqual({
      status: 403,
      body: { error: { code: 'CSRF_INVALID', message: expect.any(String) } },
    });
  });

  it('signs out', async () => {
    await page.goto(`${base}/projects`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    await shot(page, '14-signed-out');
    const probe = await page.evaluate(async () => (await fetch('/api/dashboard/session')).json());
    expect(probe.user).toBeNull();
  });
});
