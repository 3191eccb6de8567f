import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { type Browser, chromium, type Page } from 'playwright-core';
import { users } from '../../../src/areas/identity/account-tables.ts';
import { addMember } from '../../../src/areas/orgs/orgs.ts';
import type { Role } from '../../../src/areas/orgs/tables.ts';
import { type TestApp, type TestAppOptions, testApp } from '../../harness.ts';
import { seedOrg } from '../../seed.ts';
import { mailedToken } from '../../system-mail.ts';

// One real Pier on a real port and one headless Chromium per test file.

export const ARTIFACTS = path.resolve('test-artifacts/screenshots');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export async function startPier(
  env: Record<string, string> = {},
  opts: Omit<TestAppOptions, 'env'> = {},
): Promise<{ t: TestApp; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await testApp({ ...opts, env: { PUBLIC_URL: base, ...env } });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, base };
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Calls the function API from the test process, as a CLI or script would. */
export async function callFn(base: string, name: string, body: unknown, token?: string) {
  const r = await fetch(`${base}/api/fn/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return {
    status: r.status,
    body: (await r.json()) as Record<string, unknown> & { error?: { code: string } },
  };
}

/**
 * Signs a new account up in the browser, proves its address through the mailed link, and makes it a member
 * (with `role`) of a freshly seeded organization; the page is left on the dashboard's welcome.
 */
export async function signUpIntoOrg(
  page: Page,
  t: TestApp,
  base: string,
  email: string,
  role: Role,
): Promise<{ org: Awaited<ReturnType<typeof seedOrg>>['org']; userId: string }> {
  await page.goto(`${base}/sign-up`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Verify your e-mail' }).waitFor();
  await page.goto(`${base}/verify-email#token=${await mailedToken(t.deps, email, 'verify-email')}`);
  await page.getByRole('heading', { name: 'Welcome to Pier' }).waitFor();
  const { org } = await seedOrg(t.deps);
  const [me] = await t.deps.db.orm.select().from(users).where(eq(users.email, email));
  await addMember(t.deps, org.id, me!.id, role);
  return { org, userId: me!.id };
}
