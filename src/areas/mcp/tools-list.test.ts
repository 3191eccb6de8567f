import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedOrg, seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { OPERATION_META, TOOL_NAME_RE } from './tools.ts';

// The tool list as the clients agents run in load it (Claude Desktop refuses the whole list for one name
// outside TOOL_NAME_RE; the OpenAI API refuses such a tools[n].name), read with the official SDK client.

let t: TestApp;
const clients: Client[] = [];

beforeAll(async () => {
  t = await testApp({ listen: true });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await t?.close();
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'pier-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

/** Half of the 307,060 bytes tools/list answered an owner's personal token before it was cut (issue 30). */
const TOOLS_LIST_BUDGET = 153_530;

describe('tools/list for every client', () => {
  it('every name matches ^[a-zA-Z0-9_-]{1,64}$ and is unique, for a personal token and an API key', async () => {
    const tenant = await seedV1Tenant(t.deps);
    for (const token of [tenant.owner.token, tenant.test]) {
      const { tools } = await (await connect(token)).listTools();
      expect(tools.length).toBeGreaterThan(100);
      for (const tool of tools) expect(tool.name).toMatch(TOOL_NAME_RE);
      expect(new Set(tools.map((x) => x.name)).size).toBe(tools.length);
    }
  });

  it('a v1 tool keeps its operation id in _meta; the dotted id is still answered, not listed', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const client = await connect(tenant.test);
    const { tools } = await client.listTools();
    const send = tools.find((x) => x.name === 'mail_send')!;
    expect(send._meta?.[OPERATION_META]).toBe('mail.send');
    expect(tools.find((x) => x.name === 'memory_agents_list')?._meta?.[OPERATION_META]).toBe(
      'memory.agents.list',
    );
    expect(tools.map((x) => x.name)).not.toContain('mail.send');
    const mail = { from: 'hello@acme.test', to: 'someone@example.com', subject: 'Hi', text: 'Hello' };
    const sent = await client.callTool({ name: 'mail.send', arguments: mail });
    expect(sent.isError).toBeFalsy();
    expect((sent.structuredContent as { id: string }).id).toBeTruthy();
  });

  it('annotations follow the method: a read, a delete, a create', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const { tools } = await (await connect(tenant.owner.token)).listTools();
    const raw = (name: string) => tools.find((x) => x.name === name)!.annotations;
    // What a client reads: a missing hint is MCP's default.
    const MCP_DEFAULTS = {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    };
    const of = (name: string) => ({ ...MCP_DEFAULTS, ...raw(name) });
    // Sent lean: no title that would repeat the description, no hint at its default.
    expect(raw('mail_list')).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(raw('setSecretForCli')?.title).toBe(
      'Creates or replaces one secret of a project (owner or admin).',
    );
    expect(of('mail_list')).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(of('memory_delete')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(of('mail_send')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    });
    expect(of('listMyProjectsForCli')).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: false,
    });
    expect(of('destroyProjectForCli')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it(`an owner's tools/list stays under ${TOOLS_LIST_BUDGET} bytes`, async () => {
    const { owner, org } = await seedOrg(t.deps);
    await seedProject(t.deps, org);
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const body = Buffer.from(await res.arrayBuffer());
    const tools = JSON.parse(body.toString()).result.tools as { name: string }[];
    // Every tool an owner can use is in it (the deploy tool included), so the figure is the whole list.
    expect(tools.map((x) => x.name)).toContain('deployApp');
    expect(body.length).toBeLessThan(TOOLS_LIST_BUDGET);
  });
});
