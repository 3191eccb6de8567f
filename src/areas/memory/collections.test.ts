import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { hasVector, memoryTenant } from '../../../test/memory-kit.ts';
import type { V1Client } from '../../../test/v1-client.ts';
import type { ManualClock } from '../../core/clock.ts';
import { runTierMaintenance, TIER_RULES } from './tiers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ background: true });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(({ skip }) => {
  // memories.test.ts asserts the 503 answer on a database without pgvector.
  if (!hasVector(t)) skip();
});

async function waitForJob(api: V1Client, jobId: string) {
  for (let i = 0; i < 200; i++) {
    const j = (await api.get(`/memory/compaction-jobs/${jobId}`)).json();
    if (j.status === 'completed' || j.status === 'failed') return j;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('compaction job did not finish');
}

describe('collections', () => {
  it('creates with defaults, lists, reads, updates and reports stats', async () => {
    const { live } = await memoryTenant(t);
    const res = await live.post('/memory/collections', { name: 'Prefs', description: 'User preferences' });
    expect(res.statusCode).toBe(201);
    const c = res.json();
    expect(c).toMatchObject({
      name: 'Prefs',
      description: 'User preferences',
      compactionEnabled: false,
      compactionConfig: { strategy: 'summarize', threshold: 0.8 },
      memoryCount: 0,
    });
    await live.post('/memory/memories/batch', {
      memories: [
        { content: 'Likes tea', collectionId: c.id, type: 'semantic' },
        { content: 'Met on Monday', collectionId: c.id, type: 'episodic' },
        { content: 'Elsewhere', type: 'episodic' },
      ],
    });
    const up = await live.patch(`/memory/collections/${c.id}`, {
      compactionEnabled: true,
      compactionConfig: { threshold: 0.9 },
    });
    expect(up.json()).toMatchObject({
      compactionEnabled: true,
      compactionConfig: { strategy: 'summarize', threshold: 0.9 },
      memoryCount: 2,
    });
    const page = await live.get('/memory/collections', { limit: 10 });
    expect(page.json()).toMatchObject({ total: 1, hasMore: false });
    const stats = (await live.get(`/memory/collections/${c.id}/stats`)).json();
    expect(stats).toMatchObject({
      totalMemories: 2,
      byTier: { hot: 0, warm: 2, cold: 0, archived: 0 },
      byType: { semantic: 1, episodic: 1, procedural: 0, identity: 0 },
      lastCompactionAt: null,
    });
    expect(stats.storageBytes).toBeGreaterThan(2 * 384 * 4);
    for (const bad of [
      { name: '' },
      { name: 'x', compactionConfig: { threshold: 2 } },
      { name: 'x', compactionConfig: { strategy: 'merge' } },
    ]) {
      expect((await live.post('/memory/collections', bad)).statusCode).toBe(400);
    }
    expect(
      (await live.get('/memory/collections/00000000-0000-4000-8000-000000000000/stats')).statusCode,
    ).toBe(404);
  });

  it('takes a threshold too small for the float4 column, stored at the six decimals it answers', async () => {
    const { live } = await memoryTenant(t);
    const created = await live.post('/memory/collections', {
      name: 'tiny',
      compactionConfig: { threshold: 6.7e-230 },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().compactionConfig.threshold).toBe(0);
    const patched = await live.patch(`/memory/collections/${created.json().id}`, {
      compactionConfig: { threshold: 1e-45 },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().compactionConfig.threshold).toBe(0);
  });

  it('deletes keeping, deleting or reassigning its memories', async () => {
    const { live } = await memoryTenant(t);
    const mk = async (name: string, content: string) => {
      const c = (await live.post('/memory/collections', { name })).json();
      const m = (await live.post('/memory/memories', { content, collectionId: c.id })).json();
      return { c, m };
    };
    const keep = await mk('keep', 'kept memory');
    expect((await live.del(`/memory/collections/${keep.c.id}`)).json()).toEqual({ success: true });
    expect((await live.get(`/memory/memories/${keep.m.id}`)).json().collectionId).toBeNull();

    const gone = await mk('gone', 'deleted memory');
    expect((await live.del(`/memory/collections/${gone.c.id}`, { memories: 'delete' })).json()).toEqual({
      success: true,
    });
    expect((await live.get(`/memory/memories/${gone.m.id}`)).statusCode).toBe(404);

    const from = await mk('from', 'moved memory');
    const to = (await live.post('/memory/collections', { name: 'to' })).json();
    expect((await live.del(`/memory/collections/${from.c.id}`, { memories: 'reassign' })).statusCode).toBe(
      400,
    );
    expect(
      (
        await live.del(`/memory/collections/${from.c.id}`, {
          memories: 'reassign',
          targetCollectionId: '00000000-0000-4000-8000-000000000000',
        })
      ).statusCode,
    ).toBe(404);
    const moved = await live.del(
      `/memory/collections/${from.c.id}?memories=reassign&targetCollectionId=${to.id}`,
    );
    expect(moved.json()).toEqual({ success: true });
    expect((await live.get(`/memory/memories/${from.m.id}`)).json().collectionId).toBe(to.id);
    expect((await live.get(`/memory/collections/${from.c.id}`)).statusCode).toBe(404);
  });
});

describe('compaction', () => {
  const dupes = [
    'The user prefers dark mode in the dashboard.',
    'The user prefers dark mode in the dashboard at night.',
    'User prefers the dashboard in dark mode.',
  ];

  it('summarises near-duplicates into one semantic memory, archives the sources, and is idempotent', async () => {
    const { live } = await memoryTenant(t);
    const agent = (await live.post('/memory/agents', { name: 'A' })).json();
    const c = (
      await live.post('/memory/collections', {
        name: 'Prefs',
        compactionConfig: { strategy: 'summarize', threshold: 0.7 },
      })
    ).json();
    const stored = (
      await live.post('/memory/memories/batch', {
        agentId: agent.id,
        memories: [...dupes, 'Invoices go out on the first of the month.'].map((content) => ({
          content,
          collectionId: c.id,
          type: 'episodic',
          tags: ['pref'],
        })),
      })
    ).json().memories;
    const started = await live.post(`/memory/collections/${c.id}/compact`, { strategy: 'summarize' });
    expect(started.statusCode).toBe(202);
    expect(started.json()).toMatchObject({ status: 'pending', collectionId: c.id });
    const job = await waitForJob(live, started.json().jobId);
    expect(job).toMatchObject({
      status: 'completed',
      memoriesProcessed: 4,
      memoriesCreated: 1,
      memoriesArchived: 3,
    });
    expect(job.startedAt).not.toBeNull();

    const active = (await live.get('/memory/memories', { collectionId: c.id, tier: 'warm' })).json().items;
    const summary = active.find(
      (m: { type: string; metadata: { sourceMemoryIds?: string[] } }) => m.metadata.sourceMemoryIds,
    );
    expect(summary).toMatchObject({ type: 'semantic', agentId: agent.id, tags: ['pref'] });
    expect([...summary.metadata.sourceMemoryIds].sort()).toEqual(
      stored
        .slice(0, 3)
        .map((m: { id: string }) => m.id)
        .sort(),
    );
    expect(summary.content).toMatch(/dark mode/);
    const archived = (await live.get('/memory/memories', { collectionId: c.id, tier: 'archived' })).json();
    expect(archived.total).toBe(3);
    const h = (await live.get(`/memory/memories/${stored[0].id}/history`)).json();
    expect(h.items.at(-1).event).toBe('compacted');
    const stats = (await live.get(`/memory/collections/${c.id}/stats`)).json();
    expect(stats.byTier).toMatchObject({ warm: 2, archived: 3 });
    expect(stats.lastCompactionAt).not.toBeNull();

    // Re-running changes nothing.
    const again = await waitForJob(
      live,
      (await live.post(`/memory/collections/${c.id}/compact`)).json().jobId,
    );
    expect(again).toMatchObject({
      status: 'completed',
      memoriesProcessed: 2,
      memoriesCreated: 0,
      memoriesArchived: 0,
    });
    expect((await live.get('/memory/memories', { collectionId: c.id })).json().total).toBe(5);
    expect((await live.get('/memory/compaction-jobs/00000000-0000-4000-8000-000000000000')).statusCode).toBe(
      404,
    );
  });

  it('compacts an enabled collection by itself once it grows past its trigger count', async () => {
    const { live } = await memoryTenant(t);
    const c = (
      await live.post('/memory/collections', {
        name: 'Auto',
        compactionEnabled: true,
        compactionConfig: { strategy: 'summarize', threshold: 0.7, triggerCount: 3 },
      })
    ).json();
    await live.post('/memory/memories', { content: dupes[0], collectionId: c.id });
    await live.post('/memory/memories', { content: dupes[1], collectionId: c.id });
    expect((await live.get(`/memory/collections/${c.id}/stats`)).json().byTier.archived).toBe(0);
    await live.post('/memory/memories', { content: dupes[2], collectionId: c.id });
    for (let i = 0; i < 100; i++) {
      const s = (await live.get(`/memory/collections/${c.id}/stats`)).json();
      if (s.lastCompactionAt) {
        expect(s.byTier).toMatchObject({ archived: 3, warm: 1 });
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('no automatic compaction');
  });
});

describe('tiers', () => {
  it('promotes recalled memories to hot and demotes idle ones hot → warm → cold, never archiving', async () => {
    const { live } = await memoryTenant(t);
    const clock = t.clock as ManualClock;
    const popular = (await live.post('/memory/memories', { content: 'Popular fact about zebras' })).json();
    const idle = (await live.post('/memory/memories', { content: 'Idle fact about walruses' })).json();
    const kept = (await live.post('/memory/memories', { content: 'Archived fact about walruses' })).json();
    await live.patch(`/memory/memories/${kept.id}`, { tier: 'archived' });
    for (let i = 0; i < TIER_RULES.promoteAt; i++)
      await live.post('/memory/memories/recall', { query: 'zebras', limit: 1 });
    const { memoryContext } = await import('./context.ts');
    await memoryContext(t.deps).access.idle();
    await runTierMaintenance(t.deps.db, clock.now());
    const tier = async (id: string) => (await live.get(`/memory/memories/${id}`)).json().tier;
    expect(await tier(popular.id)).toBe('hot');
    expect(await tier(idle.id)).toBe('warm');

    clock.advance((TIER_RULES.hotIdleDays + 1) * 86_400_000);
    await runTierMaintenance(t.deps.db, clock.now());
    expect(await tier(popular.id)).toBe('warm');
    clock.advance((TIER_RULES.warmIdleDays - TIER_RULES.hotIdleDays) * 86_400_000);
    await runTierMaintenance(t.deps.db, clock.now());
    expect(await tier(idle.id)).toBe('cold');
    expect(await tier(popular.id)).toBe('cold');
    expect(await tier(kept.id)).toBe('archived');
    // A cold memory is recalled only on request, and comes back to hot when it is used again.
    for (let i = 0; i < TIER_RULES.promoteAt; i++)
      await live.post('/memory/memories/recall', { query: 'walruses', tier: 'cold' });
    await memoryContext(t.deps).access.idle();
    await runTierMaintenance(t.deps.db, clock.now());
    expect(await tier(idle.id)).toBe('hot');
  });
});
