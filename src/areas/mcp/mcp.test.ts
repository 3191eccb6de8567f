import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { hasVector } from '../../../test/memory-kit.ts';
import { seedMember, seedOrg, seedPlatform, seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { functions, manifests } from '../index.ts';
import { createOrg } from '../orgs/index.ts';
import { mcpAudience } from './index.ts';
import { HINT_DEFAULTS, toolName } from './tools.ts';

// The MCP endpoint through the SDK's own client on a real port: tools derived from every manifest, calls
// through the real routes, errors as tool errors, and each credential seeing only what it can use.

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
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type Result = Awaited<ReturnType<Client['callTool']>>;
const errorOf = (r: Result) => r._meta?.['dev.pier/error'] as { code: string; message: string };

const notTools = new Set(manifests().flatMap((a) => a.notTools ?? []));

describe('tools/list', () => {
  it('an owner sees every user function and every v1 operation, each with its schemas and hints', async () => {
    const { owner, org } = await seedOrg(t.deps);
    await seedProject(t.deps, org);
    const client = await connect(owner.token);
    const { tools } = await client.listTools();
    const names = new Set(tools.map((x) => x.name));
    const userFns = functions.filter((f) => f.auth.kind === 'user' && !notTools.has(f.name));
    for (const f of userFns) expect(names, f.name).toContain(f.name);
    const ops = manifests().flatMap((a) => (a.v1 ?? []).flatMap((g) => g.routes.map((r) => r.name)));
    for (const op of ops.filter((o) => !notTools.has(o))) expect(names, op).toContain(toolName(op));
    for (const hidden of ['adminCreateOrg', 'adminSetPlan', 'createDeployment', 'exchangeCliAuthCode']) {
      expect(names).not.toContain(hidden);
    }
    expect(names).toContain('deployApp');
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      // Left out of the list on purpose (tools.ts): half of its bytes, and no client shows it to the model.
      expect(tool.outputSchema, tool.name).toBeUndefined();
      expect(tool.description, tool.name).toBeTruthy();
    }
    const secret = tools.find((x) => x.name === 'setSecretForCli')!;
    expect(Object.keys(secret.inputSchema.properties ?? {})).toEqual(['projectSlug', 'key', 'value']);
    expect({ ...HINT_DEFAULTS, ...secret.annotations }).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
    });
    const send = tools.find((x) => x.name === 'mail_send')!;
    expect(send.inputSchema.required).toEqual(expect.arrayContaining(['from', 'to']));
    // Optional: it defaults to the only organization the token reaches.
    expect(send.inputSchema.required).not.toContain('organization');
    expect(Object.keys(send.inputSchema.properties ?? {})).toContain('organization');
    const hints = (name: string) => ({
      ...HINT_DEFAULTS,
      ...tools.find((x) => x.name === name)!.annotations,
    });
    expect(hints('mail_list').readOnlyHint).toBe(true);
    expect(hints('memory_delete').destructiveHint).toBe(true);
  });

  it("a member's token does not list owner-only tools", async () => {
    const { org } = await seedOrg(t.deps);
    const member = await seedMember(t.deps, org.id, 'member');
    const { tools } = await (await connect(member.token)).listTools();
    const names = tools.map((x) => x.name);
    expect(names).toContain('listMyProjectsForCli');
    expect(names).toContain('mail_send');
    for (const n of ['setSecretForCli', 'createApiKeyForCli', 'destroyProjectForCli', 'deployApp']) {
      expect(names).not.toContain(n);
    }
  });

  it('an API key lists only v1 operations (no organization argument); a platform credential its scopes', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const keyTools = (await (await connect(tenant.test)).listTools()).tools;
    expect(keyTools.every((x) => typeof x._meta?.['dev.pier/operation'] === 'string')).toBe(true);
    const send = keyTools.find((x) => x.name === 'mail_send')!;
    expect(Object.keys(send.inputSchema.properties ?? {})).not.toContain('organization');
    const plat = await seedPlatform(t.deps, ['deploy']);
    const platTools = (await (await connect(plat.token)).listTools()).tools;
    // Its own partner functions for its scopes, nothing of a person's and no v1 operation.
    expect(platTools.map((x) => x.name).sort()).toEqual([
      'createDeployment',
      'getDeployment',
      'startDeployment',
    ]);
  });
});

describe('platform credentials', () => {
  it('provision an organization, a project and a deployment through their own tools', async () => {
    const plat = await seedPlatform(t.deps, ['org.create', 'project.create', 'deploy']);
    const client = await connect(plat.token);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([
      'createDeployment',
      'createOrganization',
      'createProjectInOrg',
      'getDeployment',
      'startDeployment',
    ]);
    const org = await client.callTool({
      name: 'createOrganization',
      arguments: { email: 'Partner.Customer@example.com', name: 'Partner customer' },
    });
    expect(org.isError).toBeFalsy();
    const created = org.structuredContent as { id: string; slug: string; owner: { email: string } };
    expect(created.owner.email).toBe('partner.customer@example.com');
    const project = await client.callTool({
      name: 'createProjectInOrg',
      arguments: { orgId: created.id, slug: `pp-${created.slug.slice(0, 20)}`, name: 'Partner app' },
    });
    expect(project.isError).toBeFalsy();
    const projectId = (project.structuredContent as { id: string }).id;
    const dep = await client.callTool({ name: 'createDeployment', arguments: { projectId } });
    expect(dep.isError).toBeFalsy();
    const deploymentId = (dep.structuredContent as { deploymentId: string }).deploymentId;
    const got = await client.callTool({ name: 'getDeployment', arguments: { deploymentId } });
    expect((got.structuredContent as { status: string }).status).toBe('uploading');
    // A person's function is not a tool for it; the route's checks still answer for a scope it lacks.
    const personal = await client.callTool({ name: 'listMyProjectsForCli', arguments: {} });
    expect(errorOf(personal).code).toBe('TOOL_NOT_FOUND');
    const narrow = await connect((await seedPlatform(t.deps, ['deploy'])).token);
    const refused = await narrow.callTool({
      name: 'createOrganization',
      arguments: { email: 'x@example.com', name: 'X' },
    });
    expect(errorOf(refused).code).toBe('TOOL_NOT_FOUND');
    const missing = await narrow.callTool({ name: 'getDeployment', arguments: { deploymentId: 'nope' } });
    expect(errorOf(missing).code).toBe('DEPLOYMENT_NOT_FOUND');
  });
});

describe('tools/call', () => {
  it('lists projects and sets a secret through the function API', async () => {
    const { owner, org } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const client = await connect(owner.token);
    const list = await client.callTool({ name: 'listMyProjectsForCli', arguments: {} });
    expect(list.isError).toBeFalsy();
    expect((list.structuredContent as { result: { slug: string }[] }).result.map((x) => x.slug)).toEqual([
      p.slug,
    ]);
    expect((list.content as { text: string }[])[0]!.text).toContain(p.slug);
    const set = await client.callTool({
      name: 'setSecretForCli',
      arguments: { projectSlug: p.slug, key: 'STRIPE_KEY', value: 'sk_123' },
    });
    expect(set.structuredContent).toEqual({ ok: true, key: 'STRIPE_KEY' });
    const keys = await t.call('listSecretsForCli', { projectSlug: p.slug }, owner.token);
    expect(JSON.stringify(keys.json())).toContain('STRIPE_KEY');
  });

  it('a bad argument is a tool error naming the field; another organization’s project is not found', async () => {
    const { owner } = await seedOrg(t.deps);
    const other = await seedOrg(t.deps);
    const theirs = await seedProject(t.deps, other.org);
    const client = await connect(owner.token);
    // Listed first, as a client does: the SDK then checks every result against the tool's output schema.
    await client.listTools();
    const bad = await client.callTool({
      name: 'setSecretForCli',
      arguments: { projectSlug: 5, key: 'A', value: 'b' },
    });
    expect(bad.isError).toBe(true);
    expect(errorOf(bad).code).toBe('VALIDATION_ERROR');
    expect(errorOf(bad).message).toContain('projectSlug');
    expect((bad.content as { text: string }[])[0]!.text).toMatch(/^VALIDATION_ERROR: .*projectSlug/);
    const foreign = await client.callTool({
      name: 'setSecretForCli',
      arguments: { projectSlug: theirs.slug, key: 'A', value: 'b' },
    });
    expect(foreign.isError).toBe(true);
    expect(errorOf(foreign).code).toBe('PROJECT_NOT_FOUND');
    const unknown = await client.callTool({ name: 'adminSetPlan', arguments: {} });
    expect(errorOf(unknown).code).toBe('TOOL_NOT_FOUND');
  });

  it('sends mail with a test key, and with a personal token as the organization’s sandbox', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const viaKey = await connect(tenant.test);
    const mail = { from: 'hello@acme.test', to: 'someone@example.com', subject: 'Hi', text: 'Hello there' };
    const sent = await viaKey.callTool({ name: 'mail_send', arguments: mail });
    expect(sent.isError).toBeFalsy();
    const id = (sent.structuredContent as { id: string }).id;
    const got = await viaKey.callTool({ name: 'mail_get', arguments: { id } });
    expect((got.structuredContent as { subject: string }).subject).toBe('Hi');

    const viaToken = await connect(tenant.owner.token);
    const again = await viaToken.callTool({
      name: 'mail_send',
      arguments: { ...mail, organization: tenant.org.slug },
    });
    expect(again.isError).toBeFalsy();
    // Sandbox: the test key sees it, the live key does not.
    const againId = (again.structuredContent as { id: string }).id;
    expect((await t.v1('GET', `/mail/emails/${againId}`, tenant.test)).statusCode).toBe(200);
    expect((await t.v1('GET', `/mail/emails/${againId}`, tenant.live)).statusCode).toBe(404);
    // The owner reaches one organization: `organization` may be left out.
    const implicit = await viaToken.callTool({ name: 'mail_send', arguments: mail });
    expect(implicit.isError).toBeFalsy();
    const implicitId = (implicit.structuredContent as { id: string }).id;
    expect((await t.v1('GET', `/mail/emails/${implicitId}`, tenant.test)).statusCode).toBe(200);
    // With a second organization it must be named; the error lists the choices.
    const second = await createOrg(t.deps, {
      slug: uniq('second'),
      name: 'Second',
      ownerUserId: tenant.owner.user.id,
    });
    const missingOrg = await viaToken.callTool({ name: 'mail_send', arguments: mail });
    expect(errorOf(missingOrg).code).toBe('VALIDATION_ERROR');
    expect(errorOf(missingOrg).message).toContain('organization');
    expect(errorOf(missingOrg).message).toContain(tenant.org.slug);
    expect(errorOf(missingOrg).message).toContain(second.slug);
    const other = await seedOrg(t.deps);
    const foreign = await viaToken.callTool({
      name: 'mail_list',
      arguments: { organization: other.org.slug },
    });
    expect(errorOf(foreign).code).toBe('ORG_NOT_FOUND');
    // A bad v1 argument names its field too.
    const bad = await viaKey.callTool({ name: 'mail_send', arguments: { ...mail, to: 'not-an-address' } });
    expect(bad.isError).toBe(true);
    expect(errorOf(bad).message).toContain('to');
  });

  it('a member acts in sandbox only', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const member = await seedMember(t.deps, tenant.org.id, 'member');
    const client = await connect(member.token);
    const prod = await client.callTool({
      name: 'mail_list',
      arguments: { organization: tenant.org.slug, environment: 'production' },
    });
    expect(errorOf(prod).code).toBe('FORBIDDEN');
    const sandbox = await client.callTool({
      name: 'mail_list',
      arguments: { organization: tenant.org.slug },
    });
    expect(sandbox.isError).toBeFalsy();
  });

  it('stores a memory and recalls it', async ({ skip }) => {
    if (!hasVector(t)) skip();
    const tenant = await seedV1Tenant(t.deps);
    const client = await connect(tenant.test);
    const stored = await client.callTool({
      name: 'memory_store',
      arguments: { content: 'The customer prefers invoices as PDF attachments' },
    });
    expect(stored.isError).toBeFalsy();
    await client.callTool({
      name: 'memory_store',
      arguments: { content: 'The office plant needs water on Fridays' },
    });
    const recalled = await client.callTool({
      name: 'memory_recall',
      arguments: { query: 'invoices as PDF', limit: 1 },
    });
    const memories = (recalled.structuredContent as { memories: { content: string }[] }).memories;
    expect(memories.map((m) => m.content)).toEqual(['The customer prefers invoices as PDF attachments']);
  });
});

describe('authentication', () => {
  it('401 without a token or with a bad one, pointing at the protected-resource metadata', async () => {
    const meta = `resource_metadata="${t.deps.config.publicUrl}/.well-known/oauth-protected-resource/mcp"`;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const none = await fetch(`${t.url}/mcp`, { method: 'POST', headers, body });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(`Bearer ${meta}`);
    const bad = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        ...headers,
        authorization: 'Bearer pk.AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
      },
      body,
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", ${meta}`);
    expect((await bad.json()).error.code).toBe('AUTH_REQUIRED');
    expect((await fetch(`${t.url}/mcp`)).status).toBe(405);
    // The in-process hand-over cannot be presented from outside.
    const forged = await fetch(`${t.url}/v1/mail/emails`, {
      headers: { 'x-pier-delegation': 'a'.repeat(43) },
    });
    expect(forged.status).toBe(401);
  });

  it('answers a bare tools/call as JSON-RPC, and leaves bad headers and messages to the SDK’s refusals', async () => {
    const { owner, org } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${owner.token}`,
      'mcp-protocol-version': '2025-11-25',
    };
    const call = (body: unknown, h: Record<string, string> = headers) =>
      fetch(`${t.url}/mcp`, { method: 'POST', headers: h, body: JSON.stringify(body) });
    const msg = {
      jsonrpc: '2.0',
      id: 'call-1',
      method: 'tools/call',
      params: { name: 'getProjectForCli', arguments: { slug: p.slug } },
    };
    const ok = await call(msg);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('application/json');
    const json = await ok.json();
    expect(json).toMatchObject({
      jsonrpc: '2.0',
      id: 'call-1',
      result: { structuredContent: { slug: p.slug } },
    });
    const direct = await t.call('getProjectForCli', { slug: p.slug }, owner.token);
    expect(json.result.structuredContent).toEqual(direct.json());
    expect(JSON.parse(json.result.content[0].text)).toEqual(direct.json());
    // A list is wrapped as { result }, its text the list itself.
    const list = await (
      await call({ ...msg, params: { name: 'listMyProjectsForCli', arguments: {} } })
    ).json();
    expect(list.result.structuredContent).toEqual({ result: [expect.objectContaining({ slug: p.slug })] });
    expect(JSON.parse(list.result.content[0].text)).toEqual(list.result.structuredContent.result);
    // A tool error is a result, not a protocol error.
    const missing = await (
      await call({ ...msg, id: 7, params: { name: 'getProjectForCli', arguments: {} } })
    ).json();
    expect(missing).toMatchObject({ id: 7, result: { isError: true } });
    expect(missing.result.content[0].text).toMatch(/^VALIDATION_ERROR: .*slug/);
    // The transport's own refusals still come from the SDK.
    expect((await call(msg, { ...headers, 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    expect((await call(msg, { ...headers, accept: 'application/json' })).status).toBe(406);
    const bad = await call({ ...msg, params: { name: 5 } });
    // The SDK's server refuses it as a JSON-RPC error naming the field (as before any direct path).
    const refused = await bad.json();
    expect(refused).toMatchObject({ jsonrpc: '2.0', id: 'call-1', error: { code: -32603 } });
    expect(refused.error.message).toContain('name');
    // The header was remembered as verified (decision 080), and stops working the moment it is revoked.
    expect((await t.call('revokeTokenForCli', {}, owner.token)).statusCode).toBe(200);
    expect((await call(msg)).status).toBe(401);
  });

  it('names the audience OAuth tokens must carry', () => {
    expect(mcpAudience('https://pier.example.com/')).toBe('https://pier.example.com/mcp');
  });
});
