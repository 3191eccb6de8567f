import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { hasVector, memoryTenant } from '../../../test/memory-kit.ts';
import { memoryContext } from './context.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});
beforeEach(({ skip }) => {
  // memories.test.ts asserts the 503 answer on a database without pgvector.
  if (!hasVector(t)) skip();
});

type M = { id: string; content: string; similarity: number; tier: string };
const contents = (r: { json(): { memories: M[] } }) => r.json().memories.map((m) => m.content);

describe('recall', () => {
  it('ranks by similarity, honours limit and threshold, and reports similarity', async () => {
    const { live } = await memoryTenant(t);
    await live.post('/memory/memories/batch', {
      memories: [
        { content: 'The customer prefers invoices as PDF attachments' },
        { content: 'Invoices are due within thirty days' },
        { content: 'The office plant needs water on Fridays' },
      ],
    });
    const r = await live.post('/memory/memories/recall', { query: 'invoices as PDF', limit: 2 });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.total).toBe(2);
    expect(body.memories[0].content).toBe('The customer prefers invoices as PDF attachments');
    expect(body.memories[0].similarity).toBeGreaterThan(body.memories[1].similarity);
    expect(body.memories[0].similarity).toBeLessThanOrEqual(1);
    const strict = await live.post('/memory/memories/recall', { query: 'invoices as PDF', threshold: 0.5 });
    expect(contents(strict)).toEqual(['The customer prefers invoices as PDF attachments']);
    for (const bad of [
      { query: 'x', threshold: 1.2 },
      { query: 'x', threshold: -0.1 },
      { query: '' },
      { query: 'x', limit: 0 },
    ]) {
      expect((await live.post('/memory/memories/recall', bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
  });

  it('answers 0 similarity for a memory or query that embeds to the zero vector, not a 500', async () => {
    const { live } = await memoryTenant(t);
    // Punctuation only: no word the embedder knows, so the zero vector, whose cosine distance is NaN.
    expect((await live.post('/memory/memories', { content: '!!!' })).statusCode).toBe(201);
    expect((await live.post('/memory/memories', { content: 'dark mode on' })).statusCode).toBe(201);
    for (const body of [
      { query: 'dark mode' },
      { query: '!!', mode: 'vector' },
      { query: '%', mode: 'hybrid' },
    ]) {
      const res = await live.post('/memory/memories/recall', body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(200);
      for (const m of res.json().memories) expect(Number.isFinite(m.similarity)).toBe(true);
    }
    const zero = (await live.post('/memory/memories/recall', { query: 'dark mode', mode: 'vector' })).json();
    expect(zero.memories.find((m: { content: string }) => m.content === '!!!')?.similarity ?? 0).toBe(0);
  });

  it('finds a memory by a tag equal to the query, quotes and backslashes included, in keyword mode', async () => {
    const { live } = await memoryTenant(t);
    const tag = 'say "hi" \\ now';
    await live.post('/memory/memories/batch', {
      memories: [
        { content: 'Greeting rules for the front desk', tags: [tag] },
        { content: 'Say hi to visitors now and then' },
      ],
    });
    const r = await live.post('/memory/memories/recall', { query: tag, mode: 'keyword' });
    expect(r.statusCode).toBe(200);
    expect(contents(r)[0]).toBe('Greeting rules for the front desk');
  });

  it('combines agent, collection, type, tags and metadata filters inside the query', async () => {
    const { live } = await memoryTenant(t);
    const a = (await live.post('/memory/agents', { name: 'A' })).json();
    const b = (await live.post('/memory/agents', { name: 'B' })).json();
    const col = (await live.post('/memory/collections', { name: 'C' })).json();
    // Many close matches that fail the filter, one far match that passes: the filter must not starve it.
    await live.post('/memory/memories/batch', {
      agentId: a.id,
      memories: Array.from({ length: 30 }, (_, i) => ({
        content: `Order ${i} shipped to Berlin by express courier`,
        metadata: { region: 'eu' },
      })),
    });
    await live.post('/memory/memories', {
      content: 'Parcel for Berlin left the warehouse',
      agentId: a.id,
      collectionId: col.id,
      type: 'episodic',
      tags: ['shipping'],
      metadata: { region: 'eu', priority: 'high', nested: { x: 1 } },
    });
    await live.post('/memory/memories', {
      content: 'Order shipped to Berlin',
      agentId: b.id,
      collectionId: col.id,
      type: 'episodic',
      metadata: { priority: 'high' },
    });
    const q = { query: 'Order shipped to Berlin by express courier', limit: 3 };
    const byMeta = await live.post('/memory/memories/recall', {
      ...q,
      metadata: { priority: 'high', nested: { x: 1 } },
      agentId: a.id,
    });
    expect(contents(byMeta)).toEqual(['Parcel for Berlin left the warehouse']);
    const combined = await live.post('/memory/memories/recall', {
      ...q,
      collectionId: col.id,
      type: 'episodic',
      agentId: a.id,
      tags: ['shipping'],
    });
    expect(contents(combined)).toEqual(['Parcel for Berlin left the warehouse']);
    const byCollection = await live.post('/memory/memories/recall', { ...q, collectionId: col.id });
    expect(contents(byCollection).sort()).toEqual([
      'Order shipped to Berlin',
      'Parcel for Berlin left the warehouse',
    ]);
    expect(
      (await live.post('/memory/memories/recall', { ...q, agentId: '00000000-0000-4000-8000-000000000000' }))
        .statusCode,
    ).toBe(404);
    // An agent of this organization without memories recalls nothing; another organization's agent is a 404.
    const empty = (await live.post('/memory/agents', { name: 'Empty' })).json();
    const none = await live.post('/memory/memories/recall', { ...q, agentId: empty.id });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual({ memories: [], total: 0 });
    const other = await memoryTenant(t);
    expect((await other.live.post('/memory/memories/recall', { ...q, agentId: a.id })).statusCode).toBe(404);
    expect(
      (
        await live.post('/memory/memories/recall', {
          ...q,
          collectionId: '00000000-0000-4000-8000-000000000000',
        })
      ).statusCode,
    ).toBe(404);
  });

  it('recalls hot and warm by default, cold only when asked, archived only explicitly', async () => {
    const { live } = await memoryTenant(t);
    const ids: Record<string, string> = {};
    for (const tier of ['hot', 'warm', 'cold', 'archived']) {
      const m = (
        await live.post('/memory/memories', { content: `Tier test memory about kayaks (${tier})` })
      ).json();
      if (tier !== 'warm') await live.patch(`/memory/memories/${m.id}`, { tier });
      ids[tier] = m.id;
    }
    const tiersOf = async (extra: object) =>
      ((await live.post('/memory/memories/recall', { query: 'kayaks', ...extra })).json().memories as M[])
        .map((m) => m.tier)
        .sort();
    expect(await tiersOf({})).toEqual(['hot', 'warm']);
    expect(await tiersOf({ tier: 'cold' })).toEqual(['cold']);
    expect(await tiersOf({ tiers: ['hot', 'warm', 'cold'] })).toEqual(['cold', 'hot', 'warm']);
    expect(await tiersOf({ tier: 'archived' })).toEqual(['archived']);
  });

  it('counts accesses after replying', async () => {
    const { live } = await memoryTenant(t);
    const m = (await live.post('/memory/memories', { content: 'Favourite colour is teal' })).json();
    await live.post('/memory/memories/recall', { query: 'favourite colour' });
    await live.post('/memory/memories/recall', { query: 'teal colour' });
    await memoryContext(t.deps).access.idle();
    const after = (await live.get(`/memory/memories/${m.id}`)).json();
    expect(after.accessCount).toBe(2);
    expect(after.lastAccessedAt).toBe(t.clock.now().toISOString());
  });

  it('hybrid mode fuses vector and keyword ranks', async () => {
    const { live } = await memoryTenant(t);
    await live.post('/memory/memories/batch', {
      memories: [
        { content: 'Ticket ZX-4411 concerns a broken hinge' },
        { content: 'A ticket about a door hinge that squeaks' },
        { content: 'Lunch is at noon' },
      ],
    });
    const r = await live.post('/memory/memories/recall', {
      query: 'ZX-4411 hinge',
      mode: 'hybrid',
      limit: 2,
    });
    expect(r.statusCode).toBe(200);
    expect(contents(r)[0]).toBe('Ticket ZX-4411 concerns a broken hinge');
    expect(r.json().memories[0].similarity).toBeGreaterThan(0);
    expect((await live.post('/memory/memories/recall', { query: 'x', mode: 'fuzzy' })).statusCode).toBe(400);
  });
});

describe('keyword search', () => {
  it('finds content words (stemmed) and exact tags, ranked, scoped to the agent', async () => {
    const { live } = await memoryTenant(t);
    const a = (await live.post('/memory/agents', { name: 'A' })).json();
    await live.post('/memory/memories/batch', {
      agentId: a.id,
      memories: [
        { content: 'Refunds are processed within five days' },
        { content: 'Refund requests over 500 dollars need approval; refunds are logged' },
        { content: 'Unrelated note', tags: ['refunds'] },
        { content: 'Nothing to see here' },
      ],
    });
    await live.post('/memory/memories', { content: 'Refund of another agent' });
    const r = await live.get('/memory/memories/search', { q: 'refunds', agentId: a.id });
    expect(r.statusCode).toBe(200);
    const got = r.json().memories.map((m: { content: string }) => m.content);
    expect(got[0]).toBe('Unrelated note'); // exact tag match ranks first
    expect(got.slice(1).sort()).toEqual([
      'Refund requests over 500 dollars need approval; refunds are logged',
      'Refunds are processed within five days',
    ]);
    expect(r.json().total).toBe(3);
    // Any word matches; the memory with both words ranks first.
    const all = await live.get('/memory/memories/search', { q: 'refund processed' });
    const ranked = all.json().memories.map((m: { content: string }) => m.content);
    expect(ranked[0]).toBe('Refunds are processed within five days');
    expect(ranked).toContain('Refund of another agent');
    expect((await live.get('/memory/memories/search', {})).statusCode).toBe(400);
  });
});
