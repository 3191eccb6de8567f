import crypto from 'node:crypto';
import {
  auth,
  extractWWWAuthenticateParams,
  UnauthorizedError,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, SESSION_COOKIE } from '../../../src/areas/identity/sessions.ts';
import { createOrg } from '../../../src/areas/orgs/index.ts';
import { type TestApp, uniq } from '../../harness.ts';
import { seedOrg, seedProject } from '../../seed.ts';
import { launchBrowser, shot, startPier } from './browser-kit.ts';
import {
  MemoryProvider,
  recordingFetch,
  startCallbackServer,
  startDocServer,
  trustedLoopbackCert,
} from './oauth-kit.ts';

// The MCP authorization flow end to end against Pier's real /mcp on a real port, driven by the MCP SDK's own
// client (`Client` + `StreamableHTTPClientTransport` with an OAuthClientProvider, and `auth()`): discovery
// from /mcp's 401, a client identified by a metadata document served over https on 127.0.0.1 (reached
// through OUTBOUND_ALLOW), a dynamically registered client, consent clicked in Chromium, code exchange, tool
// calls narrowed to the grant, refresh with rotation, revocation on the tokens page, and the refusals (wrong
// audience, plain PKCE, mismatched redirect URI, a metadata document naming another client).

let t: TestApp;
let docs: Awaited<ReturnType<typeof startDocServer>>;
let callback: Awaited<ReturnType<typeof startCallbackServer>>;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let base = '';
let orgSlug = '';
let ownerId = '';
let projectSlug = '';
const clients: Client[] = [];

beforeAll(async () => {
  const tlsPair = trustedLoopbackCert();
  docs = await startDocServer(tlsPair);
  callback = await startCallbackServer();
  ({ t, base } = await startPier({ OUTBOUND_ALLOW: '127.0.0.1/32' }));
  // A signed-in owner of one organization with one project: the session cookie goes straight into the browser.
  const { org, owner } = await seedOrg(t.deps);
  orgSlug = org.slug;
  ownerId = owner.user.id;
  projectSlug = (await seedProject(t.deps, org)).slug;
  const { secret } = await createSession(t.deps, owner.user.id, { ip: '127.0.0.1' });
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  await ctx.addCookies([{ name: SESSION_COOKIE, value: secret, url: base }]);
  page = await ctx.newPage();
  page.setDefaultTimeout(10_000);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await browser?.close();
  await t?.close();
  await docs?.close();
  await callback?.close();
});

const mcpUrl = () => new URL(`${base}/mcp`);

/** One JSON-RPC tools/list POSTed to /mcp by hand, to see the status and headers a client gets. */
async function rawMcp(token?: string) {
  const res = await fetch(mcpUrl(), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.body?.cancel();
  return res;
}

/** A connected MCP client whose transport takes its bearer (and any new sign-in) from the provider. */
async function connect(provider: MemoryProvider, fetchFn?: typeof fetch) {
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider, fetch: fetchFn });
  const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = await client.callTool({ name, arguments: args });
  // A tool error carries the API error code in _meta (src/areas/mcp/dispatch.ts).
  const code = (r._meta?.['dev.pier/error'] as { code: string } | undefined)?.code;
  return { ok: !r.isError, code, data: r.structuredContent as Record<string, unknown> };
}

/** The consent page for the authorization request the SDK made: checks, optional choices, Allow. */
async function consent(
  provider: MemoryProvider,
  shotName: string,
  opts: { environment?: 'production'; resource: string; pickOrg?: boolean },
): Promise<string> {
  const authUrl = provider.authorizationUrl!;
  expect(authUrl.origin + authUrl.pathname).toBe(`${base}/api/oauth/authorize`);
  expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authUrl.searchParams.get('resource')).toBe(opts.resource);
  const arrived = callback.next();
  await page.goto(authUrl.toString());
  await page.waitForURL(/\/oauth\/consent\?request=/);
  const name = provider.clientMetadata.client_name!;
  await page.getByRole('heading', { name: `Allow ${name} to use Pier?` }).waitFor();
  expect(await page.getByTestId('client-name').textContent()).toBe(name);
  expect(await page.getByTestId('redirect-host').textContent()).toBe(new URL(callback.redirectUri).host);
  expect(await page.getByTestId('request-ip').textContent()).toBe('127.0.0.1');
  const testOrg = page.getByRole('checkbox', { name: /Test Org/ });
  if (opts.pickOrg) {
    // Several organizations: none is chosen for the user.
    expect(await testOrg.isChecked()).toBe(false);
    expect(await page.getByRole('checkbox', { name: /Other Org/ }).isChecked()).toBe(false);
    await testOrg.check();
  } else {
    // One organization: chosen already.
    expect(await testOrg.isChecked()).toBe(true);
  }
  // Sandbox is the default environment.
  expect(await page.getByRole('radio', { name: /Sandbox only/ }).isChecked()).toBe(true);
  if (opts.environment) await page.getByRole('radio', { name: /Production too/ }).check();
  await shot(page, shotName);
  await page.getByRole('button', { name: 'Allow access' }).click();
  const back = await arrived;
  // The callback server has the request; the browser's own navigation there may still be loading, and the
  // test's next goto would interrupt it.
  await page.waitForURL(/\/callback\?/);
  expect(back.searchParams.get('state')).toBe('sdk-state-1');
  expect(back.searchParams.get('iss')).toBe(base);
  return back.searchParams.get('code')!;
}

const refreshWith = (refreshToken: string, clientId: string) =>
  fetch(`${base}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }),
  });

describe('OAuth for MCP clients', () => {
  // The tests run in order: the first makes a second organization after its consent, so the second test's
  // user has two to choose from.
  let otherSlug = '';

  it("signs in a client identified by its metadata document from /mcp's 401, calls tools within the grant, refreshes with rotation, refuses the old refresh token", async () => {
    const clientId = `${docs.base}/agent/client.json`;
    docs.set('/agent/client.json', {
      client_id: clientId,
      client_name: 'Doc Agent',
      redirect_uris: [callback.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    // What any client meets first: a 401 naming /mcp's own resource metadata.
    const first = await rawMcp();
    expect(first.status).toBe(401);
    expect(String(extractWWWAuthenticateParams(first).resourceMetadataUrl)).toBe(
      `${base}/.well-known/oauth-protected-resource/mcp`,
    );

    // The SDK's client connects, meets that 401, discovers Pier and asks the user (UnauthorizedError).
    const provider = new MemoryProvider(callback.redirectUri, { client_name: 'Doc Agent' }, clientId);
    const rec = recordingFetch();
    const before = docs.fetches();
    const transport = new StreamableHTTPClientTransport(mcpUrl(), {
      authProvider: provider,
      fetch: rec.fetch,
    });
    const signingIn = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    clients.push(signingIn);
    await expect(signingIn.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(rec.seen.slice(0, 2)).toEqual([
      'POST /mcp -> 401',
      'GET /.well-known/oauth-protected-resource/mcp -> 200',
    ]);
    expect(rec.seen).toContain('GET /.well-known/oauth-authorization-server -> 200');
    const code = await consent(provider, 'oauth-01-consent-cimd', {
      environment: 'production',
      resource: `${base}/mcp`,
    });
    await transport.finishAuth(code);
    // The SDK used the URL as client_id (no registration) and Pier fetched the document over https.
    expect(provider.clientInformation()?.client_id).toBe(clientId);
    expect(rec.seen.some((r) => r.includes('/api/oauth/register'))).toBe(false);
    expect(rec.seen).toContain('POST /api/oauth/token -> 200');
    expect(docs.fetches()).toBeGreaterThan(before);
    const tokens = provider.tokens()!;
    expect(tokens.access_token).toMatch(/^mcpat\./);

    // Connected again with the token: the tools an OAuth grant reaches, as the signed-in user.
    const client = await connect(provider);
    const names = (await client.listTools()).tools.map((x) => x.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'whoamiForCli',
        'listMyOrgsForCli',
        'listMyProjectsForCli',
        'setSecretForCli',
        'mail_list',
      ]),
    );
    for (const n of ['createTokenForCli', 'listTokensForCli', 'createOrgForCli', 'revokeOauthGrantForCli']) {
      expect(names).not.toContain(n);
    }
    expect((await call(client, 'whoamiForCli')).data).toMatchObject({
      user: { id: ownerId },
      token: { label: 'Doc Agent' },
    });
    // An organization the user makes after consenting is not in the grant: answers leave it out.
    const other = await createOrg(t.deps, { slug: uniq('other'), name: 'Other Org', ownerUserId: ownerId });
    otherSlug = other.slug;
    const theirs = await seedProject(t.deps, other);
    const projects = await call(client, 'listMyProjectsForCli');
    expect((projects.data.result as { slug: string }[]).map((p) => p.slug)).toEqual([projectSlug]);
    const orgs = await call(client, 'listMyOrgsForCli');
    expect((orgs.data.result as { slug: string }[]).map((o) => o.slug)).toEqual([orgSlug]);
    expect((await call(client, 'setSecretForCli', { projectSlug, key: 'K', value: 'v' })).ok).toBe(true);
    expect(
      (await call(client, 'setSecretForCli', { projectSlug: theirs.slug, key: 'K', value: 'v' })).code,
    ).toBe('PROJECT_NOT_FOUND');
    // Production was granted: v1 tools act there, not in sandbox, and only in the granted organization.
    expect((await call(client, 'mail_list', { organization: orgSlug })).ok).toBe(true);
    expect((await call(client, 'mail_list', { organization: orgSlug, environment: 'sandbox' })).code).toBe(
      'FORBIDDEN',
    );
    expect((await call(client, 'mail_list', { organization: otherSlug })).code).toBe('ORG_NOT_FOUND');

    // The token is for /mcp only: the function API and v1 refuse it.
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    const fnCall = await fetch(`${base}/api/fn/listMyOrgsForCli`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(fnCall.status).toBe(401);
    expect((await fetch(`${base}/v1/mail/emails`, { headers: bearer })).status).toBe(401);

    // Refresh through the SDK: a new pair; the connected client now sends the new access token, and it works.
    const oldRefresh = tokens.refresh_token!;
    expect(await auth(provider, { serverUrl: mcpUrl() })).toBe('AUTHORIZED');
    const rotated = provider.tokens()!;
    expect(rotated.refresh_token).not.toBe(oldRefresh);
    expect(rotated.access_token).not.toBe(tokens.access_token);
    expect((await call(client, 'whoamiForCli')).ok).toBe(true);
    // The old refresh token is refused (and, being replayed, ends the grant).
    const replay = await refreshWith(oldRefresh, clientId);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    expect((await rawMcp(rotated.access_token)).status).toBe(401);
    // The client's own refresh fails too, so the SDK sends the user back to consent.
    provider.authorizationUrl = undefined;
    await expect(client.listTools()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl).toBeDefined();
  });

  it('signs in a dynamically registered client sent to the root metadata, and revoking it on the tokens page ends its access within 1 s', async () => {
    const provider = new MemoryProvider(callback.redirectUri, { client_name: 'Registered Agent' });
    // A client sent to the API's root document instead asks for the root resource; Pier narrows the grant
    // to /mcp, so the token works there.
    const resourceMetadataUrl = new URL(`${base}/.well-known/oauth-protected-resource`);
    expect(await auth(provider, { serverUrl: mcpUrl(), resourceMetadataUrl })).toBe('REDIRECT');
    expect(provider.clientInformation()?.client_id).toMatch(/^pierc_/);
    const code = await consent(provider, 'oauth-02-consent-dcr', { resource: base, pickOrg: true });
    expect(await auth(provider, { serverUrl: mcpUrl(), resourceMetadataUrl, authorizationCode: code })).toBe(
      'AUTHORIZED',
    );
    const tokens = provider.tokens()!;
    const client = await connect(provider);
    const orgs = await call(client, 'listMyOrgsForCli');
    expect((orgs.data.result as { slug: string }[]).map((o) => o.slug)).toEqual([orgSlug]);
    // Sandbox was granted (the default): production is refused.
    expect((await call(client, 'mail_list', { organization: orgSlug })).ok).toBe(true);
    expect((await call(client, 'mail_list', { organization: orgSlug, environment: 'production' })).code).toBe(
      'FORBIDDEN',
    );

    await page.goto(`${base}/tokens`);
    const row = page.getByRole('row', { name: /Registered Agent/ });
    await row.waitFor();
    expect(await row.textContent()).toContain(orgSlug);
    expect(await row.textContent()).not.toContain(otherSlug);
    expect(await row.textContent()).toContain('sandbox');
    await shot(page, 'oauth-03-tokens-page');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    const clicked = Date.now();
    await page.getByText('No application is connected.').waitFor();
    // Revocation is synchronous (caches cleared before the answer): the first call after it is refused.
    let status = 200;
    while (status === 200 && Date.now() - clicked < 1000) status = (await rawMcp(tokens.access_token)).status;
    expect(status).toBe(401);
    const refreshed = await refreshWith(
      tokens.refresh_token!,
      String(provider.clientInformation()?.client_id),
    );
    expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_grant');
    // The connected client cannot refresh either: the SDK asks the user again.
    provider.authorizationUrl = undefined;
    await expect(client.listTools()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl).toBeDefined();
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
