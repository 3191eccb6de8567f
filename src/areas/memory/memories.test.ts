import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { expectVectorMissing, hasVector, memoryTenant } from '../../../test/memory-kit.ts';
import { seedPlatform } from '../../../test/seed.ts';
import { v1Client } from '../../../test/v1-client.ts';
import type { ManualClock } from '../../core/clock.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const missing = '00000000-0000-4000-8000-000000000000';

describe('memory without pgvector', () => {
  it('answers 503 VECTOR_EXTENSION_MISSING, or works when the extension is there', async () => {
    if (hasVector(t)) {
      const { live } = await memoryTenant(t);
      expect((await live.post('/memory/memories', { content: 'x' })).statusCode).toBe(201);
      return;
    }
    await expectVectorMissing(t);
  });
});

describe('memory API', () => {
  // Without pgvector the 503 test above is what runs; the behaviour below needs the extension.
  beforeEach(({ skip }) => {
    if (!hasVector(t)) skip();
  });

  it('needs an API key: 401 without, 403 for other credentials', async () => {
    const anon = v1Client(t);
    const none = await anon.get('/memory/agents');
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('AUTH_REQUIRED');
    const plat = await seedPlatform(t.deps, ['deploy']);
    const denied = await v1Client(t, plat.token).get('/memory/agents');
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.code).toBe('FORBIDDEN');
  });

  it('creates, lists, reads, updates and deletes agents; deleting removes their memories', async () => {
    const { live } = await memoryTenant(t);
    const created = await live.post('/memory/agents', {
      name: 'Support bot',
      description: 'Answers tickets',
      instructions: 'Be kind',
      metadata: { team: 'support' },
    });
    expect(created.statusCode).toBe(201);
    const agent = created.json();
    expect(agent).toMatchObject({
      name: 'Support bot',
      description: 'Answers tickets',
      metadata: { team: 'support' },
    });
    await live.post('/memory/agents', { name: 'Second' });
    const page = await live.get('/memory/agents', { limit: 1 });
    expect(page.json()).toMatchObject({ total: 2, hasMore: true });
    expect(page.json().items).toHaveLength(1);
    expect((await live.get(`/memory/agents/${agent.id}`)).json().name).toBe('Support bot');
    const patched = await live.patch(`/memory/agents/${agent.id}`, { instructions: 'Be brief' });
    expect(patched.json()).toMatchObject({ name: 'Support bot', instructions: 'Be brief' });

    const mem = (
      await live.post('/memory/memories', { content: 'Customer likes tea', agentId: agent.id })
    ).json();
    const del = await live.del(`/memory/agents/${agent.id}`);
    expect(del.json()).toEqual({ success: true });
    expect((await live.get(`/memory/agents/${agent.id}`)).json().error.code).toBe('AGENT_NOT_FOUND');
    expect((await live.get(`/memory/memories/${mem.id}`)).statusCode).toBe(404);
    // Recall checks the agent in its own statement: a deleted agent is 404 in every mode.
    for (const mode of ['hybrid', 'vector', 'keyword']) {
      const r = await live.post('/memory/memories/recall', { query: 'tea', agentId: agent.id, mode });
      expect(r.statusCode, mode).toBe(404);
      expect(r.json().error.code).toBe('AGENT_NOT_FOUND');
    }
  });

  it('stores a memory with defaults, embeds it and reads it back', async () => {
    const { live } = await memoryTenant(t);
    const res = await live.post('/memory/memories', {
      content: '  The user prefers dark mode  ',
      tags: ['ui', 'ui'],
    });
    expect(res.statusCode).toBe(201);
    const m = res.json();
    expect(m).toMatchObject({
      // Exactly as sent (the contract): surrounding spaces kept.
      content: '  The user prefers dark mode  ',
      type: 'semantic',
      tier: 'warm',
      confidence: 1,
      accessCount: 0,
      tags: ['ui'],
      metadata: {},
      agentId: null,
      lastAccessedAt: null,
      embeddingModel: 'pier-local/hash-384-v1',
    });
    expect(Date.parse(m.createdAt)).not.toBeNaN();
    expect((await live.get(`/memory/memories/${m.id}`)).json()).toEqual(m);
  });

  it('takes a confidence too small for the float4 column, stored at the six decimals it answers', async () => {
    const { live } = await memoryTenant(t);
    const one = await live.post('/memory/memories', { content: 'tiny confidence', confidence: 2e-279 });
    expect(one.statusCode, one.body).toBe(201);
    expect(one.json().confidence).toBe(0);
    const batch = await live.post('/memory/memories/batch', {
      memories: [{ content: 'tiny in a batch', confidence: 9.4e-323 }],
    });
    expect(batch.statusCode, batch.body).toBe(201);
    const patched = await live.patch(`/memory/memories/${one.json().id}`, { confidence: 1e-45 });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().confidence).toBe(0);
  });

  it('rejects bad input with 400 and unknown agents or collections with 404', async () => {
    const { live } = await memoryTenant(t);
    for (const body of [
      {},
      { content: '' },
      { content: 'x', confidence: 1.5 },
      { content: 'x', confidence: -0.1 },
      { content: 'x', type: 'dream' },
      { content: 'x', metadata: 'nope' },
    ]) {
      const res = await live.post('/memory/memories', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
    expect((await live.post('/memory/memories', { content: 'x', agentId: missing })).json().error.code).toBe(
      'AGENT_NOT_FOUND',
    );
    expect((await live.post('/memory/memories', { content: 'x', agentId: 'not-a-uuid' })).statusCode).toBe(
      404,
    );
    expect(
      (await live.post('/memory/memories', { content: 'x', collectionId: missing })).json().error.code,
    ).toBe('COLLECTION_NOT_FOUND');
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ content: `m${i}` }));
    expect((await live.post('/memory/memories/batch', { memories: tooMany })).statusCode).toBe(400);
    expect((await live.post('/memory/memories/batch', { memories: [] })).statusCode).toBe(400);
    expect(
      (await live.post('/memory/memories/batch', { memories: [{ content: 'a' }], agentId: missing }))
        .statusCode,
    ).toBe(404);
    expect((await live.get('/memory/memories', { limit: 101 })).statusCode).toBe(400);
    expect((await live.patch(`/memory/memories/${missing}`, { confidence: 0.5 })).json().error.code).toBe(
      'MEMORY_NOT_FOUND',
    );
  });

  it('batch-stores up to 100 memories and folds exact duplicates', async () => {
    const { live } = await memoryTenant(t);
    const agent = (await live.post('/memory/agents', { name: 'A' })).json();
    const items = Array.from({ length: 100 }, (_, i) => ({ content: `Fact number ${i}`, type: 'episodic' }));
    items[99] = { content: 'Fact number 0', type: 'episodic' };
    const res = await live.post('/memory/memories/batch', { memories: items, agentId: agent.id });
    expect(res.statusCode).toBe(201);
    expect(res.json().created).toBe(99);
    expect(res.json().memories).toHaveLength(100);
    expect(res.json().memories[99].id).toBe(res.json().memories[0].id);
    expect(res.json().memories.every((m: { agentId: string }) => m.agentId === agent.id)).toBe(true);
    const again = await live.post('/memory/memories/batch', {
      memories: items.slice(0, 3),
      agentId: agent.id,
    });
    expect(again.json().created).toBe(0);
    expect((await live.get('/memory/memories', { agentId: agent.id })).json().total).toBe(99);
  });

  it('returns the existing memory for an exact duplicate and keeps the highest confidence', async () => {
    const { live } = await memoryTenant(t);
    const first = await live.post('/memory/memories', { content: 'Ships on Mondays', confidence: 0.6 });
    const dup = await live.post('/memory/memories', { content: 'Ships  on Mondays', confidence: 0.9 });
    expect(dup.statusCode).toBe(201);
    expect(dup.json().id).toBe(first.json().id);
    expect(dup.json().createdAt).toBe(first.json().createdAt);
    expect(dup.json().confidence).toBe(0.9);
    const lower = await live.post('/memory/memories', { content: 'Ships on Mondays', confidence: 0.2 });
    expect(lower.json().confidence).toBe(0.9);
    // Another agent's memory with the same words is its own memory.
    const agent = (await live.post('/memory/agents', { name: 'B' })).json();
    const other = await live.post('/memory/memories', { content: 'Ships on Mondays', agentId: agent.id });
    expect(other.statusCode).toBe(201);
  });

  it('lists with filters combined and pages with { items, total, hasMore }', async () => {
    const { live } = await memoryTenant(t);
    const agent = (await live.post('/memory/agents', { name: 'A' })).json();
    const col = (await live.post('/memory/collections', { name: 'C' })).json();
    await live.post('/memory/memories', {
      content: 'a1',
      agentId: agent.id,
      type: 'episodic',
      collectionId: col.id,
    });
    await live.post('/memory/memories', { content: 'a2', agentId: agent.id, type: 'episodic' });
    await live.post('/memory/memories', {
      content: 'a3',
      agentId: agent.id,
      type: 'procedural',
      collectionId: col.id,
    });
    await live.post('/memory/memories', { content: 'n1', type: 'episodic', collectionId: col.id });
    const q = await live.get('/memory/memories', {
      agentId: agent.id,
      type: 'episodic',
      collectionId: col.id,
    });
    expect(q.json().items.map((m: { content: string }) => m.content)).toEqual(['a1']);
    const all = await live.get('/memory/memories', { limit: 3 });
    expect(all.json()).toMatchObject({ total: 4, hasMore: true });
    expect(all.json().items).toHaveLength(3);
    const rest = await live.get('/memory/memories', { limit: 3, offset: 3 });
    expect(rest.json()).toMatchObject({ total: 4, hasMore: false });
    expect((await live.get('/memory/memories', { tier: 'cold' })).json().total).toBe(0);
  });

  it('keeps history: an update re-embeds the content and records the earlier version', async () => {
    const { live } = await memoryTenant(t);
    const m = (await live.post('/memory/memories', { content: 'Lives in Berlin', tags: ['home'] })).json();
    (t.clock as ManualClock).advance(60_000);
    const up = await live.patch(`/memory/memories/${m.id}`, { content: 'Lives in Lisbon', confidence: 0.8 });
    expect(up.statusCode).toBe(200);
    expect(up.json()).toMatchObject({ content: 'Lives in Lisbon', confidence: 0.8, tags: ['home'] });
    const recalled = await live.post('/memory/memories/recall', { query: 'Lisbon', limit: 1 });
    expect(recalled.json().memories[0].id).toBe(m.id);
    expect(recalled.json().memories[0].similarity).toBeGreaterThan(0.3);
    const stale = await live.post('/memory/memories/recall', { query: 'Berlin', limit: 1, threshold: 0.3 });
    expect(stale.json().memories).toEqual([]);
    const h = (await live.get(`/memory/memories/${m.id}/history`)).json();
    expect(h.total).toBe(1);
    expect(h.current.content).toBe('Lives in Lisbon');
    expect(h.items[0]).toMatchObject({
      content: 'Lives in Berlin',
      confidence: 1,
      event: 'updated',
      validFrom: m.createdAt,
    });
    expect(h.items[0].validTo).toBe(up.json().updatedAt);
    const noop = await live.patch(`/memory/memories/${m.id}`, { content: 'Lives in Lisbon', tags: ['home'] });
    expect(noop.json().updatedAt).toBe(up.json().updatedAt);
    expect((await live.get(`/memory/memories/${m.id}/history`)).json().total).toBe(1);
    await live.patch(`/memory/memories/${m.id}`, { tier: 'archived' });
    const h2 = (await live.get(`/memory/memories/${m.id}/history`)).json();
    expect(h2.items.map((i: { event: string }) => i.event)).toEqual(['updated', 'archived']);
  });

  it('refuses an update that would make an exact duplicate (409)', async () => {
    const { live } = await memoryTenant(t);
    await live.post('/memory/memories', { content: 'one' });
    const two = (await live.post('/memory/memories', { content: 'two' })).json();
    const res = await live.patch(`/memory/memories/${two.id}`, { content: 'one' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('MEMORY_DUPLICATE');
  });

  it('deletes one memory and many (counting only the caller’s own)', async () => {
    const { live } = await memoryTenant(t);
    const other = await memoryTenant(t);
    const ids = [];
    for (const c of ['x1', 'x2', 'x3'])
      ids.push((await live.post('/memory/memories', { content: c })).json().id);
    const foreign = (await other.live.post('/memory/memories', { content: 'theirs' })).json().id;
    expect((await live.del(`/memory/memories/${ids[0]}`)).json()).toEqual({ success: true });
    expect((await live.del(`/memory/memories/${ids[0]}`)).statusCode).toBe(404);
    const many = await live.post('/memory/memories/delete-many', {
      memoryIds: [ids[1], ids[2], foreign, 'junk'],
    });
    expect(many.json()).toEqual({ deletedCount: 2 });
    expect((await other.live.get(`/memory/memories/${foreign}`)).statusCode).toBe(200);
    expect((await live.post('/memory/memories/delete-many', { memoryIds: [] })).statusCode).toBe(400);
  });

  it('isolates organizations and environments: the other one’s things are 404', async () => {
    const a = await memoryTenant(t);
    const b = await memoryTenant(t);
    const agent = (await a.live.post('/memory/agents', { name: 'A' })).json();
    const mem = (await a.live.post('/memory/memories', { content: 'secret plan', agentId: agent.id })).json();
    const col = (await a.live.post('/memory/collections', { name: 'C' })).json();
    for (const c of [b.live, a.sandbox]) {
      expect((await c.get(`/memory/agents/${agent.id}`)).statusCode).toBe(404);
      expect((await c.get(`/memory/memories/${mem.id}`)).statusCode).toBe(404);
      expect((await c.patch(`/memory/memories/${mem.id}`, { content: 'mine' })).statusCode).toBe(404);
      expect((await c.del(`/memory/memories/${mem.id}`)).statusCode).toBe(404);
      expect((await c.get(`/memory/collections/${col.id}`)).statusCode).toBe(404);
      expect((await c.post('/memory/memories', { content: 'x', agentId: agent.id })).statusCode).toBe(404);
      expect((await c.get('/memory/memories')).json().total).toBe(0);
      expect((await c.get('/memory/agents')).json().total).toBe(0);
      const r = await c.post('/memory/memories/recall', { query: 'secret plan' });
      expect(r.json().memories).toEqual([]);
      expect((await c.get('/memory/memories/search', { q: 'secret' })).json().memories).toEqual([]);
    }
    // The same content in the sandbox is a separate memory.
    expect((await a.sandbox.post('/memory/memories', { content: 'secret plan' })).statusCode).toBe(201);
  });
});
