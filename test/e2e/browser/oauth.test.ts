import crypto from 'node:crypto';
import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, SESSION_COOKIE } from '../../../src/areas/identity/sessions.ts';
import { type TestApp, testApp, uniq } from '../../harness.ts';
import { seedOrg } from '../../seed.ts';
import { freePort, launchBrowser, shot } from './browser-kit.ts';
import {
  MemoryProvider,
  startCallbackServer,
  startDocServer,
  startFront,
  trustedLoopbackCert,
} from './oauth-kit.ts';

// The MCP authorization flow end to end, driven by the MCP SDK's own client auth (`auth()` with an
// OAuthClientProvider) against Pier on real ports: discovery from a 401, a client identified by a metadata
// document served over https on 127.0.0.1 (reached through OUTBOUND_ALLOW), a dynamically registered
// client, consent clicked in Chromium, code exchange, calls, refresh with rotation, revocation on the
// tokens page, and the refusals (wrong audience, plain PKCE, mismatched redirect URI).

let t: TestApp;
let front: Awaited<ReturnType<typeof startFront>>;
let docs: Awaited<ReturnType<typeof startDocServer>>;
let callback: Awaited<ReturnType<typeof startCallbackServer>>;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let base = '';
let orgId = '';
let orgSlug = '';

beforeAll(async () => {
  const tlsPair = trustedLoopbackCert();
  docs = await startDocServer(tlsPair);
  callback = await startCallbackServer();
  let pierUrl = '';
  front = await startFront(
    () => t.deps,
    () => pierUrl,
  );
  base = front.base;
  t = await testApp({ env: { PUBLIC_URL: base, OUTBOUND_ALLOW: '127.0.0.1/32' } });
  const port = await freePort();
  await t.app.listen({ port, host: '127.0.0.1' });
  pierUrl = `http://127.0.0.1:${port}`;
  // A signed-in owner of one organization: the session cookie goes straight into the browser.
  const { org, owner } = await seedOrg(t.deps);
  orgId = org.id;
  orgSlug = org.slug;
  const { secret } = await createSession(t.deps, owner.user.id, { ip: '127.0.0.1' });
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  await ctx.addCookies([{ name: SESSION_COOKIE, value: secret, url: base }]);
  page = await ctx.newPage();
  page.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await front?.close();
  await docs?.close();
  await callback?.close();
});

const mcpUrl = () => new URL(`${base}/mcp`);

async function callMcp(token?: string) {
  const res = await fetch(mcpUrl(), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, res, body: (await res.json()) as Record<string, unknown> };
}

/** Discovery from the 401, the SDK's authorization request, consent in Chromium, code exchange. */
async function signInWith(
  provider: MemoryProvider,
  shotName: string,
  opts: { environment?: 'production'; rootMetadata?: boolean } = {},
) {
  const first = await callMcp();
  expect(first.status).toBe(401);
  let { resourceMetadataUrl } = extractWWWAuthenticateParams(first.res);
  expect(String(resourceMetadataUrl)).toBe(`${base}/.well-known/oauth-protected-resource/mcp`);
  // A 401 that points at the API's root document instead: the client then asks for the root resource.
  if (opts.rootMetadata) resourceMetadataUrl = new URL(`${base}/.well-known/oauth-protected-resource`);
  const started = await auth(provider, { serverUrl: mcpUrl(), resourceMetadataUrl });
  expect(started).toBe('REDIRECT');
  const authUrl = provider.authorizationUrl!;
  expect(authUrl.origin + authUrl.pathname).toBe(`${base}/api/oauth/authorize`);
  expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authUrl.searchParams.get('resource')).toBe(opts.rootMetadata ? base : `${base}/mcp`);
  const arrived = callback.next();
  await page.goto(authUrl.toString());
  await page.waitForURL(/\/oauth\/consent\?request=/);
  const name = provider.clientMetadata.client_name!;
  await page.getByRole('heading', { name: `Allow ${name} to use Pier?` }).waitFor();
  expect(await page.getByTestId('client-name').textContent()).toBe(name);
  expect(await page.getByTestId('redirect-host').textContent()).toBe(new URL(callback.redirectUri).host);
  expect(await page.getByTestId('request-ip').textContent()).toBe('127.0.0.1');
  // One organization: chosen already; sandbox is the default environment.
  expect(await page.getByRole('checkbox', { name: /Test Org/ }).isChecked()).toBe(true);
  expect(await page.getByRole('radio', { name: /Sandbox only/ }).isChecked()).toBe(true);
  if (opts.environment) await page.getByRole('radio', { name: /Production too/ }).check();
  await shot(page, shotName);
  await page.getByRole('button', { name: 'Allow access' }).click();
  const back = await arrived;
  expect(back.searchParams.get('state')).toBe('sdk-state-1');
  expect(back.searchParams.get('iss')).toBe(base);
  const code = back.searchParams.get('code')!;
  expect(await auth(provider, { serverUrl: mcpUrl(), resourceMetadataUrl, authorizationCode: code })).toBe(
    'AUTHORIZED',
  );
  return provider.tokens()!;
}

describe('OAuth for MCP clients', () => {
  it('signs in a client identified by its metadata document, refreshes with rotation, refuses the old refresh token', async () => {
    const clientId = `${docs.base}/agent/client.json`;
    docs.set('/agent/client.json', {
      client_id: clientId,
      client_name: 'Doc Agent',
      redirect_uris: [callback.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const provider = new MemoryProvider(callback.redirectUri, { client_name: 'Doc Agent' }, clientId);
    const before = docs.fetches();
    const tokens = await signInWith(provider, 'oauth-01-consent-cimd', { environment: 'production' });
    // The SDK used the URL as client_id (no registration) and Pier fetched the document over https.
    expect(provider.clientInformation()?.client_id).toBe(clientId);
    expect(docs.fetches()).toBeGreaterThan(before);
    expect(tokens.access_token).toMatch(/^mcpat\./);
    const call = await callMcp(tokens.access_token);
    expect(call.status).toBe(200);
    expect(call.body).toMatchObject({
      via: 'oauth',
      oauth: { clientId, audience: `${base}/mcp`, orgIds: [orgId], environment: 'production' },
    });

    // The token is for /mcp only: another resource, the function API and v1 refuse it.
    const other = await fetch(`${base}/other`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(other.status).toBe(401);
    const fnCall = await fetch(`${base}/api/fn/listMyOrgsForCli`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(fnCall.status).toBe(401);

    // Refresh through the SDK: a new pair; the new access token works.
    const oldRefresh = tokens.refresh_token!;
    expect(await auth(provider, { serverUrl: mcpUrl() })).toBe('AUTHORIZED');
    const rotated = provider.tokens()!;
    expect(rotated.refresh_token).not.toBe(oldRefresh);
    expect(rotated.access_token).not.toBe(tokens.access_token);
    expect((await callMcp(rotated.access_token)).status).toBe(200);
    // The old refresh token is refused (and, being replayed, ends the grant).
    const replay = await fetch(`${base}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: oldRefresh,
        client_id: clientId,
      }),
    });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    expect((await callMcp(rotated.access_token)).status).toBe(401);
  });

  it('signs in a dynamically registered client, and revoking it on the tokens page ends its access within 1 s', async () => {
    const provider = new MemoryProvider(callback.redirectUri, { client_name: 'Registered Agent' });
    const tokens = await signInWith(provider, 'oauth-02-consent-dcr', { rootMetadata: true });
    expect(provider.clientInformation()?.client_id).toMatch(/^pierc_/);
    const call = await callMcp(tokens.access_token);
    expect(call.status).toBe(200);
    expect(call.body).toMatchObject({
      oauth: { environment: 'sandbox', orgIds: [orgId], audience: `${base}/mcp` },
    });

    await page.goto(`${base}/tokens`);
    const row = page.getByRole('row', { name: /Registered Agent/ });
    await row.waitFor();
    expect(await row.textContent()).toContain(orgSlug);
    expect(await row.textContent()).toContain('sandbox');
    await shot(page, 'oauth-03-tokens-page');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    const clicked = Date.now();
    await page.getByText('No application is connected.').waitFor();
    // Revocation is synchronous (caches cleared before the answer): the first call after it is refused.
    let status = 200;
    while (status === 200 && Date.now() - clicked < 1000)
      status = (await callMcp(tokens.access_token)).status;
    expect(status).toBe(401);
    const refreshed = await fetch(`${base}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: String(provider.clientInformation()?.client_id),
      }),
    });
    expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('refuses a wrong audience, a plain PKCE challenge and a mismatched redirect URI', async () => {
    const reg = await fetch(`${base}/api/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: uniq('agent'),
        redirect_uris: [callback.redirectUri],
        token_endpoint_auth_method: 'none',
      }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const verifier = crypto.randomBytes(32).toString('base64url');
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const authorize = (q: Record<string, string>) =>
      fetch(
        `${base}/api/oauth/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: callback.redirectUri,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state: 'z',
          ...q,
        })}`,
        { redirect: 'manual' },
      );
    const wrongAudience = new URL((await authorize({ resource: `${base}/other` })).headers.get('location')!);
    expect(wrongAudience.searchParams.get('error')).toBe('invalid_target');
    const plain = new URL(
      (await authorize({ code_challenge: verifier, code_challenge_method: 'plain' })).headers.get(
        'location',
      )!,
    );
    expect(plain.searchParams.get('error')).toBe('invalid_request');
    expect(plain.searchParams.get('state')).toBe('z');
    const mismatch = await authorize({ redirect_uri: `${callback.redirectUri}x` });
    expect(mismatch.status).toBe(400);
    expect(mismatch.headers.get('location')).toBeNull();
    expect(((await mismatch.json()) as { error: string }).error).toBe('invalid_request');
    // A metadata document that names another client_id is no client.
    docs.set('/liar.json', {
      client_id: 'https://elsewhere.example/c.json',
      redirect_uris: [callback.redirectUri],
    });
    const liar = await authorize({ client_id: `${docs.base}/liar.json` });
    expect(liar.status).toBe(400);
    expect(((await liar.json()) as { error: string }).error).toBe('invalid_client');
    // The browser sees the same refusal and stays on Pier.
    await page.goto(`${base}/api/oauth/authorize?client_id=${clientId}&redirect_uri=https://evil.example/cb`);
    expect(page.url().startsWith(base)).toBe(true);
  });
});
