import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { modelUsage } from '../models/tables.ts';
import { HINT_DEFAULTS } from './tools.ts';

// The model proxy's chat completions as a tool (a hand-written v1 plugin, so a tool written for it in
// tools.ts): through a personal token as the organization's sandbox, against a local OpenAI-format server.

let t: TestApp;
let openai: FakeServer;
const clients: Client[] = [];

beforeAll(async () => {
  openai = await startOpenAIServer();
  t = await testApp({
    listen: true,
    env: { OPENAI_API_KEY: 'sk-platform-openai-test', OPENAI_BASE_URL: `${openai.url}/v1` },
  });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await t?.close();
  await openai?.close();
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

describe('ai_chatCompletions', () => {
  it('is listed without streaming and answers one completion, counted in the organization’s usage', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const client = await connect(tenant.owner.token);
    const tool = (await client.listTools()).tools.find((x) => x.name === 'ai_chatCompletions')!;
    expect(tool._meta?.['dev.pier/operation']).toBe('ai.chatCompletions');
    expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['model', 'messages']),
    );
    expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain('stream');
    expect({ ...HINT_DEFAULTS, ...tool.annotations }).toMatchObject({
      readOnlyHint: false,
      openWorldHint: true,
    });
    const res = await client.callTool({
      name: 'ai_chatCompletions',
      // `stream` is not one of the tool's arguments: it is not passed on, and the answer comes whole.
      arguments: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], stream: true },
    });
    expect(res.isError).toBeFalsy();
    const completion = res.structuredContent as {
      object: string;
      choices: { message: { content: string } }[];
    };
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toBeTruthy();
    // Usage is written off the response path (buffered): wait for it.
    await expect
      .poll(async () => {
        const rows = await t.deps.db.orm.select().from(modelUsage).where(eq(modelUsage.orgId, tenant.org.id));
        return rows.map((r) => r.environment);
      })
      .toEqual(['sandbox']);
  });

  it('a provider refusal is a tool error with the API code', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const client = await connect(tenant.test);
    const res = await client.callTool({
      name: 'ai_chatCompletions',
      arguments: { model: 'nobody/unknown-model', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(res.isError).toBe(true);
    expect((res._meta?.['dev.pier/error'] as { code?: string } | undefined)?.code).toMatch(/^MODEL_/);
  });

  it('is not a tool where the proxy is not mounted (no `proxy` role)', async () => {
    const apiOnly = await testApp({ listen: true, env: { ROLES: 'api' } });
    try {
      const tenant = await seedV1Tenant(apiOnly.deps);
      const client = new Client({ name: 'pier-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${apiOnly.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${tenant.test}` } },
        }),
      );
      const names = (await client.listTools()).tools.map((x) => x.name);
      expect(names).toContain('mail_send');
      expect(names).not.toContain('ai_chatCompletions');
      await client.close();
    } finally {
      await apiOnly.close();
    }
  });
});
