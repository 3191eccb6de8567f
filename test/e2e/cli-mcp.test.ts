import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../harness.ts';
import { seedOrg } from '../seed.ts';
import { json, pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier mcp` prints a client configuration; with --new-token, one an MCP client connects with as is.

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
});

it('prints the MCP client configuration, and one with a fresh token that connects', async () => {
  const { owner } = await seedOrg(t.deps);
  const home = scratchHome();
  const env = { PIER_TOKEN: owner.token };
  const plain = await pier(['mcp'], { url, home, env });
  expect(plain.code).toBe(0);
  expect(plain.stdout).toContain(`"url": "${url}/mcp"`);
  expect(plain.stdout).toContain(`claude mcp add --transport http pier ${url}/mcp`);
  expect(plain.stdout).not.toContain(owner.token);

  type Out = {
    url: string;
    config: { mcpServers: { pier: { url: string; headers: { Authorization: string } } } };
  };
  const out = json<Out>(await pier(['mcp', '--new-token', '--json'], { url, home, env }));
  const entry = out.config.mcpServers.pier;
  expect(entry.url).toBe(`${url}/mcp`);
  expect(entry.headers.Authorization).toMatch(/^Bearer pk\./);
  const client = new Client({ name: 'cli-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }),
  );
  const me = await client.callTool({ name: 'whoamiForCli', arguments: {} });
  expect(JSON.stringify(me.structuredContent)).toContain(owner.user.email);
  await client.close();
});
