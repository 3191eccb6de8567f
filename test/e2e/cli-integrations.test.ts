import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../harness.ts';
import { connect, integrationsApp, type Providers, startProviders, tenant } from '../integrations-kit.ts';
import { seedMember, seedOperator } from '../seed.ts';
import { json, pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier integrations connectors | connections | test` against a real server and the provider fakes, as a
// plain member with a personal token.

let p: Providers & { close(): Promise<void> };
let t: TestApp;
beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p, { listen: true });
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
  await p?.close();
});

it('lists connectors and connections and tests a connection', async () => {
  const { api, tenant: tn } = await tenant(t);
  const member = await seedMember(t.deps, tn.org.id, 'member');
  const id = await connect(t, api, p.hubspot, 'hubspot', 'customer-42');
  const home = scratchHome();
  const run = (args: string[]) => pier(args, { url: t.url, home, env: { PIER_TOKEN: member.token } });
  const org = tn.org.slug;

  const connectors = await run(['integrations', 'connectors']);
  expect(connectors.code, connectors.stderr).toBe(0);
  expect(connectors.stdout).toMatch(/^SLUG\s+CATEGORY\s+CONFIGURED\s+NEEDS\n/);
  expect(connectors.stdout).toMatch(/\nhubspot\s+crm\s+yes\s+-\n/);
  expect(connectors.stdout).toMatch(
    /\ndropbox\s+storage\s+no\s+INTEGRATIONS_DROPBOX_CLIENT_ID INTEGRATIONS_DROPBOX_CLIENT_SECRET\n/,
  );

  const list = json<{ data: { id: string; endUserId: string; status: string }[] }>(
    await run(['integrations', 'connections', '--org', org, '--json']),
  );
  expect(list.data).toEqual([expect.objectContaining({ id, endUserId: 'customer-42', status: 'connected' })]);
  const text = await run(['integrations', 'connections', '--org', org]);
  expect(text.stdout).toContain(`${id}  hubspot`);
  const sandbox = await run(['integrations', 'connections', '--org', org, '--env', 'sandbox']);
  expect(sandbox.stdout).toBe(`No connections in ${org} (sandbox).\n`);

  expect(json(await run(['integrations', 'test', id, '--org', org, '--json']))).toEqual({ success: true });
  const ok = await run(['integrations', 'test', id, '--org', org]);
  expect([ok.code, ok.stdout]).toEqual([0, `Connection ${id} works.\n`]);

  p.hubspot.refuseRefresh(true);
  p.hubspot.expireAccessTokens();
  const bad = await run(['integrations', 'test', id, '--org', org]);
  p.hubspot.refuseRefresh(false);
  expect(bad.code).toBe(1);
  expect(bad.stdout).toMatch(/^Connection .* failed: .*refresh/);

  const stranger = await run(['integrations', 'connections', '--org', 'no-such-org']);
  expect(stranger.code).toBe(1);
  expect(stranger.stderr).toContain('ORG_NOT_FOUND');
  const missing = await run(['integrations', 'test', '00000000-0000-4000-8000-000000000000', '--org', org]);
  expect(missing.stderr).toContain('CONNECTION_NOT_FOUND');
  expect((await run(['integrations', 'connections'])).code).toBe(2);
}, 180_000); // twelve CLI processes, each a Node start-up

it("the operator reads Notion's webhook verification token with pier admin integrations webhook-tokens", async () => {
  const token = 'secret_cli_verification';
  const sent = await t.app.inject({
    method: 'POST',
    url: '/v1/integrations/webhooks/notion',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ verification_token: token }),
  });
  expect(sent.statusCode).toBe(200);
  const home = scratchHome();
  const op = await seedOperator(t.deps);
  const run = (env: Record<string, string>) =>
    pier(['admin', 'integrations', 'webhook-tokens', '--connector', 'notion'], { url: t.url, home, env });
  const read = await run({ PIER_OPERATOR_KEY: op.token });
  expect(read.code, read.stderr).toBe(0);
  expect(read.stdout).toMatch(new RegExp(`^\\S+  notion  ${token}\\n$`));
  const { tenant: tn } = await tenant(t);
  const refused = await run({ PIER_OPERATOR_KEY: tn.owner.token });
  expect(refused.code).toBe(1);
  expect(refused.stdout + refused.stderr).not.toContain(token);
  expect(refused.stderr).toContain('FORBIDDEN');
}, 60_000);
