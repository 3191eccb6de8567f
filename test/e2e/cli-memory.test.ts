import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { memoryContext } from '../../src/areas/memory/context.ts';
import { type TestApp, testApp } from '../harness.ts';
import { hasVector, memoryTenant } from '../memory-kit.ts';
import { seedMember } from '../seed.ts';
import { json, pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier memory agents | recall` against a real server, as a plain member with a personal token.

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

it('lists agents and recalls memories without counting an access', async ({ skip }) => {
  if (!hasVector(t)) skip();
  const { tenant, orgId, live, sandbox } = await memoryTenant(t);
  const member = await seedMember(t.deps, orgId, 'member');
  const agent = (await live.post('/memory/agents', { name: 'Support bot' })).json();
  await live.post('/memory/memories/batch', {
    agentId: agent.id,
    memories: [
      { content: 'The customer prefers invoices as PDF attachments' },
      { content: 'The office plant needs water on Fridays' },
    ],
  });
  await sandbox.post('/memory/memories', { content: 'Sandbox invoices as PDF' });
  const home = scratchHome();
  const run = (args: string[]) => pier(args, { url, home, env: { PIER_TOKEN: member.token } });
  const org = tenant.org.slug;

  const agents = json<{ items: { name: string; memoryCount: number }[] }>(
    await run(['memory', 'agents', '--org', org, '--json']),
  );
  expect(agents.items).toEqual([expect.objectContaining({ name: 'Support bot', memoryCount: 2 })]);

  const r = json<{ memories: { id: string; content: string; similarity: number }[] }>(
    await run([
      'memory',
      'recall',
      'invoices as PDF',
      '--org',
      org,
      '--agent',
      agent.id,
      '--limit',
      '1',
      '--json',
    ]),
  );
  expect(r.memories.map((m) => m.content)).toEqual(['The customer prefers invoices as PDF attachments']);
  expect(r.memories[0]!.similarity).toBeGreaterThan(0);

  const text = await run(['memory', 'recall', 'invoices as PDF', '--org', org, '--env', 'sandbox']);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/^SIMILARITY\s+ID\s+CONTENT\n\d\.\d{3}\s+\S+\s+Sandbox invoices as PDF\n$/);

  await memoryContext(t.deps).access.idle();
  expect((await live.get(`/memory/memories/${r.memories[0]!.id}`)).json().accessCount).toBe(0);

  expect((await run(['memory', 'recall', 'x', '--org', org, '--threshold', '2'])).code).not.toBe(0);
  expect((await run(['memory', 'recall', 'x', '--org', org, '--env', 'staging'])).code).toBe(2);
  const stranger = await run(['memory', 'agents', '--org', 'no-such-org']);
  expect(stranger.stderr).toContain('ORG_NOT_FOUND');
});
