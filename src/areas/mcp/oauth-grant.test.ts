import crypto from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedApiKey, seedOrg, seedProject } from '../../../test/seed.ts';
import type { Caller } from '../../core/auth/caller.ts';
import type { CredentialRow } from '../../core/auth/credentials.ts';
import { createOrg } from '../orgs/index.ts';
import { mcpAudience } from './index.ts';

// What an OAuth access token reaches through /mcp. The tokens themselves come from the authorization server
// (another area); here the credential service is made to resolve two test bearers to the caller such a
// token stands for (the agreed interface: a user caller with via 'oauth' and its grant).

let t: TestApp;
const bearers = new Map<string, Caller>();
const clients: Client[] = [];

beforeAll(async () => {
  t = await testApp({ listen: true });
  const creds = t.deps.credentials;
  const verifyCached = creds.verifyCached.bind(creds);
  const verifyCaller = creds.verifyCaller.bind(creds);
  const fake = (b: string) => {
    const caller = bearers.get(b);
    return caller ? { row: {} as CredentialRow, caller } : undefined;
  };
  creds.verifyCached = (b) => fake(b) ?? verifyCached(b);
  creds.verifyCaller = async (b) => fake(b) ?? verifyCaller(b);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await t?.close();
});

async function grant(audience: string) {
  const { owner, org } = await seedOrg(t.deps);
  const other = await createOrg(t.deps, {
    slug: `other-${crypto.randomBytes(4).toString('hex')}`,
    name: 'Other',
    ownerUserId: owner.user.id,
  });
  const bearer = `mcpat.test${crypto.randomBytes(12).toString('hex')}`;
  bearers.set(bearer, {
    kind: 'user',
    userId: owner.user.id,
    credentialId: crypto.randomUUID(),
    via: 'oauth',
    label: 'test client',
    createdAt: new Date(),
    oauth: {
      clientId: 'https://client.example/meta.json',
      audience,
      orgIds: [org.id],
      environment: 'sandbox',
    },
  });
  return { bearer, owner, org, other };
}

async function connect(bearer: string): Promise<Client> {
  const c = new Client({ name: 'oauth-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${bearer}` } },
    }),
  );
  clients.push(c);
  return c;
}

const codeOf = (r: Awaited<ReturnType<Client['callTool']>>) =>
  (r._meta?.['dev.pier/error'] as { code: string } | undefined)?.code;

describe('an OAuth grant at /mcp', () => {
  it('refuses a token bound to another audience with 401 invalid_token', async () => {
    const { bearer } = await grant('https://elsewhere.example/mcp');
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", resource_metadata=/);
  });

  it('lists org-checkable tools only and narrows account reads to the granted organizations', async () => {
    const { bearer, org, other } = await grant(mcpAudience(t.deps.config.publicUrl));
    const mine = await seedProject(t.deps, org);
    const theirs = await seedProject(t.deps, other);
    const client = await connect(bearer);
    const names = (await client.listTools()).tools.map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['listMyProjectsForCli', 'setSecretForCli', 'mail_send']));
    for (const n of ['createTokenForCli', 'listTokensForCli', 'getProjectForCli', 'createOrgForCli']) {
      expect(names).not.toContain(n);
    }
    const projects = await client.callTool({ name: 'listMyProjectsForCli', arguments: {} });
    expect((projects.structuredContent as { result: { slug: string }[] }).result.map((p) => p.slug)).toEqual([
      mine.slug,
    ]);
    const ok = await client.callTool({
      name: 'setSecretForCli',
      arguments: { projectSlug: mine.slug, key: 'K', value: 'v' },
    });
    expect(ok.isError).toBeFalsy();
    const refused = await client.callTool({
      name: 'setSecretForCli',
      arguments: { projectSlug: theirs.slug, key: 'K', value: 'v' },
    });
    expect(codeOf(refused)).toBe('PROJECT_NOT_FOUND');
  });

  it('v1 tools act only in a granted organization, in the granted environment', async () => {
    const { bearer, org, other } = await grant(mcpAudience(t.deps.config.publicUrl));
    const client = await connect(bearer);
    const list = await client.callTool({ name: 'mail_list', arguments: { organization: org.slug } });
    expect(list.isError).toBeFalsy();
    const foreign = await client.callTool({ name: 'mail_list', arguments: { organization: other.slug } });
    expect(codeOf(foreign)).toBe('ORG_NOT_FOUND');
    const prod = await client.callTool({
      name: 'mail_list',
      arguments: { organization: org.slug, environment: 'production' },
    });
    expect(codeOf(prod)).toBe('FORBIDDEN');
  });

  it('a v1 tool without `organization` acts in the only granted one, though the user owns two', async () => {
    const { bearer, org } = await grant(mcpAudience(t.deps.config.publicUrl));
    const client = await connect(bearer);
    const list = (await client.listTools()).tools.find((x) => x.name === 'mail_send')!;
    expect(list.inputSchema.required ?? []).not.toContain('organization');
    const sent = await client.callTool({
      name: 'mail_send',
      arguments: { from: 'hello@acme.test', to: 'someone@example.com', subject: 'Hi', text: 'Hello' },
    });
    expect(sent.isError).toBeFalsy();
    const id = (sent.structuredContent as { id: string }).id;
    // It landed in the granted organization's sandbox.
    const key = await seedApiKey(t.deps, org.id, 'test');
    expect((await t.v1('GET', `/mail/emails/${id}`, key.key)).statusCode).toBe(200);
  });
});
