import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { needsVector } from '../../../test/fn-samples.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { hasVector, memoryTenant } from '../../../test/memory-kit.ts';
import { expectCredentialGuards, expectError, expectTenantGuards } from '../../../test/security.ts';
import { seedMember, seedOrg, seedUser } from '../../../test/seed.ts';
import type { ManualClock } from '../../core/clock.ts';
import { memoryContext } from './context.ts';

// The dashboard's memory functions: personal credentials of any member, the memory service underneath,
// organization + environment scoping, and a recall that does not count as an access.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const missing = '00000000-0000-4000-8000-000000000000';

/** An organization with memories stored through v1, and a plain member to look at them. */
async function memoryOrg() {
  const m = await memoryTenant(t);
  const member = await seedMember(t.deps, m.orgId, 'member');
  const call = (name: string, body: Record<string, unknown>, token = member.token) =>
    t.call(name, { orgSlug: m.tenant.org.slug, environment: 'production', ...body }, token);
  return { ...m, member, call };
}

describe('memory functions without pgvector', () => {
  it('answer 503 VECTOR_EXTENSION_MISSING to members and 404 to strangers, as v1 does', async () => {
    if (hasVector(t)) return;
    const { org } = await seedOrg(t.deps);
    const stranger = await seedUser(t.deps);
    const member = await seedMember(t.deps, org.id, 'member');
    const base = { orgSlug: org.slug, environment: 'production' };
    const bodies: Record<string, Record<string, unknown>> = {
      listMemoryAgentsForCli: {},
      listMemoryCollectionsForCli: {},
      listMemoriesForCli: {},
      getMemoryForCli: { memoryId: missing },
      recallMemoriesForCli: { query: 'x' },
      getMemoryUsageByDayForCli: {},
    };
    // The usage chart counts both environments: it takes none.
    const full = (name: string, body: Record<string, unknown>) =>
      name === 'getMemoryUsageByDayForCli' ? { orgSlug: org.slug } : { ...base, ...body };
    expect(Object.keys(bodies).sort()).toEqual([...needsVector].sort());
    for (const [name, body] of Object.entries(bodies)) {
      const off = await t.call(name, full(name, body), member.token);
      expectError(off, 503, 'VECTOR_EXTENSION_MISSING');
      expect(off.json().error.message).toMatch(/pgvector/);
      expectError(await t.call(name, full(name, body), stranger.token), 404, 'ORG_NOT_FOUND');
    }
  });
});

describe('memory functions', () => {
  beforeEach(({ skip }) => {
    if (!hasVector(t)) skip();
  });

  it('list agents with memory counts and collections', async () => {
    const { live, call } = await memoryOrg();
    const a = (await live.post('/memory/agents', { name: 'Support bot' })).json();
    (t.clock as ManualClock).advance(1000); // newest first: b, then a
    const b = (await live.post('/memory/agents', { name: 'Sales bot' })).json();
    const col = (await live.post('/memory/collections', { name: 'Billing' })).json();
    await live.post('/memory/memories/batch', {
      agentId: a.id,
      memories: [{ content: 'one' }, { content: 'two', collectionId: col.id }, { content: 'three' }],
    });
    await live.post('/memory/memories', { content: 'no agent at all' });
    const agents = await call('listMemoryAgentsForCli', {});
    expect(agents.statusCode, agents.body).toBe(200);
    expect(agents.json()).toMatchObject({ total: 2, hasMore: false, memoriesWithoutAgent: 1 });
    const counts = Object.fromEntries(
      agents.json().items.map((x: { name: string; memoryCount: number }) => [x.name, x.memoryCount]),
    );
    expect(counts).toEqual({ 'Support bot': 3, 'Sales bot': 0 });
    expect(agents.json().items.map((x: { id: string }) => x.id)).toEqual([b.id, a.id]);
    const paged = await call('listMemoryAgentsForCli', { limit: 1, offset: 1 });
    expect(paged.json()).toMatchObject({ total: 2, hasMore: false, items: [{ id: a.id, memoryCount: 3 }] });

    const cols = await call('listMemoryCollectionsForCli', {});
    expect(cols.json()).toMatchObject({ total: 1, items: [{ id: col.id, name: 'Billing', memoryCount: 1 }] });
  });

  it('list memories by agent, collection, type and tier, with pages', async () => {
    const { live, call } = await memoryOrg();
    const a = (await live.post('/memory/agents', { name: 'A' })).json();
    const other = (await live.post('/memory/agents', { name: 'B' })).json();
    const col = (await live.post('/memory/collections', { name: 'C' })).json();
    await live.post('/memory/memories/batch', {
      agentId: a.id,
      memories: [
        { content: 'fact one', type: 'semantic' },
        { content: 'event two', type: 'episodic', collectionId: col.id },
        { content: 'how to three', type: 'procedural' },
      ],
    });
    await live.post('/memory/memories', { content: 'someone else', agentId: other.id });
    const cold = (await live.post('/memory/memories', { content: 'old news', agentId: a.id })).json();
    await live.patch(`/memory/memories/${cold.id}`, { tier: 'cold' });

    const byAgent = await call('listMemoriesForCli', { agentId: a.id });
    expect(byAgent.statusCode, byAgent.body).toBe(200);
    expect(byAgent.json().total).toBe(4);
    expect(byAgent.json().items[0]).toMatchObject({
      content: expect.any(String),
      type: expect.any(String),
      tier: expect.any(String),
      confidence: 1,
      accessCount: 0,
      updatedAt: expect.any(String),
    });
    const contents = async (body: Record<string, unknown>) =>
      (await call('listMemoriesForCli', { agentId: a.id, ...body }))
        .json()
        .items.map((x: { content: string }) => x.content);
    expect(await contents({ type: 'episodic' })).toEqual(['event two']);
    expect(await contents({ collectionId: col.id })).toEqual(['event two']);
    expect(await contents({ tier: 'cold' })).toEqual(['old news']);
    expect(await contents({ type: 'procedural', tier: 'warm' })).toEqual(['how to three']);
    const page1 = (await call('listMemoriesForCli', { agentId: a.id, limit: 3 })).json();
    const page2 = (await call('listMemoriesForCli', { agentId: a.id, limit: 3, offset: 3 })).json();
    expect([page1.hasMore, page2.hasMore, page1.items.length, page2.items.length]).toEqual([
      true,
      false,
      3,
      1,
    ]);
    expect((await call('listMemoriesForCli', {})).json().total).toBe(5);
    // An agent that names nothing here lists nothing (as on v1).
    expect((await call('listMemoriesForCli', { agentId: missing })).json()).toMatchObject({ total: 0 });
  });

  it('get a memory with its history', async () => {
    const { live, call } = await memoryOrg();
    const m = (
      await live.post('/memory/memories', {
        content: 'Prefers tea',
        tags: ['drinks'],
        metadata: { src: 'chat' },
      })
    ).json();
    // Versions are ordered by time: let time pass between the two updates.
    (t.clock as ManualClock).advance(60_000);
    await live.patch(`/memory/memories/${m.id}`, { content: 'Prefers green tea' });
    (t.clock as ManualClock).advance(60_000);
    await live.patch(`/memory/memories/${m.id}`, { confidence: 0.5 });
    const r = await call('getMemoryForCli', { memoryId: m.id });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().memory).toMatchObject({
      id: m.id,
      content: 'Prefers green tea',
      tags: ['drinks'],
      metadata: { src: 'chat' },
      confidence: 0.5,
    });
    expect(r.json().history.map((h: { content: string; event: string }) => [h.content, h.event])).toEqual([
      ['Prefers tea', 'updated'],
      ['Prefers green tea', 'updated'],
    ]);
    expectError(await call('getMemoryForCli', { memoryId: missing }), 404, 'MEMORY_NOT_FOUND');
    expectError(await call('getMemoryForCli', { memoryId: 'not-a-uuid' }), 404, 'MEMORY_NOT_FOUND');
  });

  it('recall ranks by similarity and does not count as an access', async () => {
    const { live, call } = await memoryOrg();
    const a = (await live.post('/memory/agents', { name: 'A' })).json();
    await live.post('/memory/memories/batch', {
      agentId: a.id,
      memories: [
        { content: 'The customer prefers invoices as PDF attachments' },
        { content: 'Invoices are due within thirty days' },
        { content: 'The office plant needs water on Fridays' },
      ],
    });
    const r = await call('recallMemoriesForCli', { query: 'invoices as PDF', agentId: a.id, limit: 2 });
    expect(r.statusCode, r.body).toBe(200);
    const [first, second] = r.json().memories;
    expect(r.json().total).toBe(2);
    expect(first.content).toBe('The customer prefers invoices as PDF attachments');
    expect(first.similarity).toBeGreaterThan(second.similarity);
    expect(first.similarity).toBeLessThanOrEqual(1);
    // The same answer as v1 for the same query.
    const v1 = (
      await live.post('/memory/memories/recall', { query: 'invoices as PDF', agentId: a.id, limit: 2 })
    ).json();
    expect(v1.memories.map((m: { id: string }) => m.id)).toEqual([first.id, second.id]);
    const strict = await call('recallMemoriesForCli', { query: 'invoices as PDF', threshold: 0.5 });
    expect(strict.json().memories.map((m: { id: string }) => m.id)).toEqual([first.id]);
    const hybrid = await call('recallMemoriesForCli', { query: 'invoices PDF', mode: 'hybrid' });
    expect(hybrid.json().memories[0].id).toBe(first.id);
    // Each result says which leg found it, so the panel can show why it came back.
    expect(hybrid.json().memories[0].foundBy).toBe('both');
    const legs = (await call('recallMemoriesForCli', { query: 'invoices PDF', mode: 'vector' })).json();
    expect(legs.memories.map((m: { foundBy: string }) => m.foundBy)).toEqual(
      legs.memories.map(() => 'vector'),
    );

    // Only v1's recall (one call above) counted; the dashboard's three looks did not.
    await memoryContext(t.deps).access.idle();
    for (let i = 0; i < 3; i++) await call('recallMemoriesForCli', { query: 'invoices as PDF' });
    await memoryContext(t.deps).access.idle();
    const after = (await call('getMemoryForCli', { memoryId: first.id })).json().memory;
    expect(after.accessCount).toBe(1);
    const plant = (await call('listMemoriesForCli', { agentId: a.id }))
      .json()
      .items.find((m: { content: string }) => m.content.includes('plant'));
    expect([plant.accessCount, plant.lastAccessedAt]).toEqual([0, null]);

    expectError(await call('recallMemoriesForCli', { query: 'x', agentId: missing }), 404, 'AGENT_NOT_FOUND');
    expectError(
      await call('recallMemoriesForCli', { query: 'x', collectionId: missing }),
      404,
      'COLLECTION_NOT_FOUND',
    );
  });

  it('refuses bad input with 400 VALIDATION_ERROR', async () => {
    const { call } = await memoryOrg();
    const bad: [string, Record<string, unknown>][] = [
      ['recallMemoriesForCli', { query: 'x', threshold: 1.2 }],
      ['recallMemoriesForCli', { query: 'x', threshold: -0.1 }],
      ['recallMemoriesForCli', { query: 'x', limit: 0 }],
      ['recallMemoriesForCli', { query: 'x', limit: 101 }],
      ['recallMemoriesForCli', { query: '   ' }],
      ['recallMemoriesForCli', { query: 'x', mode: 'fuzzy' }],
      ['recallMemoriesForCli', { query: 'x', metadata: { a: 1 } }],
      ['listMemoriesForCli', { tier: 'lukewarm' }],
      ['listMemoriesForCli', { type: 'dream' }],
      ['listMemoriesForCli', { limit: 1000 }],
      ['listMemoriesForCli', { offset: -1 }],
      ['listMemoriesForCli', { environment: 'staging' }],
      ['listMemoriesForCli', { environment: undefined }],
      ['listMemoryAgentsForCli', { extra: true }],
      ['getMemoryForCli', {}],
    ];
    for (const [name, body] of bad) {
      const r = await call(name, body);
      expect({ name, body, status: r.statusCode, code: r.json().error?.code }).toEqual({
        name,
        body,
        status: 400,
        code: 'VALIDATION_ERROR',
      });
    }
  });

  it('keeps production and sandbox apart', async () => {
    const { live, sandbox, call } = await memoryOrg();
    const prod = (await live.post('/memory/memories', { content: 'Production secret plan' })).json();
    const test = (await sandbox.post('/memory/memories', { content: 'Sandbox secret plan' })).json();
    await sandbox.post('/memory/agents', { name: 'Sandbox agent' });
    const ids = async (environment: string) =>
      (await call('listMemoriesForCli', { environment })).json().items.map((m: { id: string }) => m.id);
    expect(await ids('production')).toEqual([prod.id]);
    expect(await ids('sandbox')).toEqual([test.id]);
    expect((await call('listMemoryAgentsForCli', {})).json().total).toBe(0);
    expect((await call('listMemoryAgentsForCli', { environment: 'sandbox' })).json().total).toBe(1);
    expectError(await call('getMemoryForCli', { memoryId: test.id }), 404, 'MEMORY_NOT_FOUND');
    expect((await call('getMemoryForCli', { memoryId: test.id, environment: 'sandbox' })).statusCode).toBe(
      200,
    );
    const recalled = await call('recallMemoriesForCli', { query: 'secret plan', environment: 'production' });
    expect(recalled.json().memories.map((m: { id: string }) => m.id)).toEqual([prod.id]);
  });

  it("hides another organization's memory and refuses API keys", async () => {
    const mine = await memoryOrg();
    const theirs = await memoryOrg();
    const secret = (await theirs.live.post('/memory/memories', { content: 'Their secret' })).json();
    // My member asking for their organization: it does not exist for me.
    const asStranger = await t.call(
      'listMemoriesForCli',
      { orgSlug: theirs.tenant.org.slug, environment: 'production' },
      mine.member.token,
    );
    expectError(asStranger, 404, 'ORG_NOT_FOUND');
    // Their memory id through my organization: not found, and not recalled.
    expectError(await mine.call('getMemoryForCli', { memoryId: secret.id }), 404, 'MEMORY_NOT_FOUND');
    const r = await mine.call('recallMemoriesForCli', { query: 'Their secret' });
    expect(r.json().memories).toEqual([]);

    for (const name of needsVector) {
      const body = (c: { orgSlug: string }) => ({
        orgSlug: c.orgSlug,
        // The usage chart counts both environments.
        ...(name === 'getMemoryUsageByDayForCli' ? {} : { environment: 'production' }),
        ...(name === 'recallMemoriesForCli' ? { query: 'x' } : {}),
        ...(name === 'getMemoryForCli' ? { memoryId: missing } : {}),
      });
      await expectCredentialGuards(t, name, { kind: 'user' }, body({ orgSlug: mine.tenant.org.slug }));
      if (name !== 'getMemoryForCli')
        await expectTenantGuards(t, { name, body, notFound: 'ORG_NOT_FOUND', managersOnly: false });
    }
  });
});
