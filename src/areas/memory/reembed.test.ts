import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { expectPlanUses, hasVector, memoryTenant } from '../../../test/memory-kit.ts';
import { v1Client } from '../../../test/v1-client.ts';
import { reembedOrg } from '../models/reembed.ts';
import { embedderSql, indexName } from './vector-indexes.ts';

// Changing EMBEDDING_MODEL between two runs: each organization's vectors are rewritten by its own
// `models.reembed` job with progress, recall keeps using the old vectors until the job switches.

const MODEL = 'openai/text-embedding-3-small';
const LOCAL = 'pier-local/hash-384-v1';
let fake: FakeServer;
let t: TestApp;

beforeAll(async () => {
  fake = await startOpenAIServer('openai', { embedDim: 48 });
  t = await testApp({ persist: true, queue: true });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const embedCalls = () => fake.requests.filter((r) => r.path === '/v1/embeddings');

it('re-embeds an organization in a job with progress, recalling the old vectors until it switches', async () => {
  if (!hasVector(t)) return;
  const a = await memoryTenant(t);
  const b = await memoryTenant(t);
  const notes = ['pay the rent on the first', 'water the plants on friday', 'the gate code is 4711'];
  const extra = ['call the plumber', 'renew the domain in may'];
  expect(
    (
      await a.live.post('/memory/memories/batch', {
        memories: [...notes, ...extra].map((content) => ({ content })),
      })
    ).statusCode,
  ).toBe(201);
  expect(
    (await b.live.post('/memory/memories', { content: 'the other tenant keeps its own notes' })).statusCode,
  ).toBe(201);
  const view = async (who: typeof a) =>
    (await t.call('getModelEmbedderForCli', { orgSlug: who.tenant.org.slug }, who.tenant.owner.token)).json();
  expect((await view(a)).active).toEqual({ model: LOCAL, dimension: 384, generation: 0 });

  // The operator configures a provider's model and restarts.
  t = await t.restart({
    EMBEDDING_MODEL: MODEL,
    OPENAI_API_KEY: 'sk-platform-key',
    OPENAI_BASE_URL: `${fake.url}/v1`,
    MODEL_MAX_RETRIES: '0',
  });
  const liveA = v1Client(t, a.tenant.live);
  const liveB = v1Client(t, b.tenant.live);
  const recallA = async (query: string) => {
    const r = await liveA.post('/memory/memories/recall', { query, limit: 3 });
    expect(r.statusCode).toBe(200);
    return r.json().memories as { content: string; embeddingModel: string }[];
  };

  // First use after the change: recall still answers from the local vectors, and the job is queued.
  expect((await recallA('the gate code is 4711'))[0]).toMatchObject({
    content: 'the gate code is 4711',
    embeddingModel: LOCAL,
  });
  expect(embedCalls()).toHaveLength(0);
  expect((await view(a)).pending).toMatchObject({ model: MODEL });
  const jobs = await t.deps.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'models.reembed' AND data->>'orgId' = $1`,
    [a.orgId],
  );
  expect(jobs.rows[0]!.n).toBe(1);
  // The other organization has not used memory since: nothing of it moves.
  expect((await view(b)).pending).toBeNull();

  // The job's work, in batches of 2, with the provider holding each request until the test lets it go.
  const gate = fake.hold();
  const run = reembedOrg(t.deps, a.orgId, MODEL, 2);
  await expect.poll(() => gate.held(), { timeout: 10_000 }).toBe(1);
  expect((await view(a)).pending.progress).toEqual({ done: 0, total: 5 });
  // A write meanwhile goes to the active (local) embedder and is recalled at once; the job picks it up.
  const w = await liveA.post('/memory/memories', { content: 'written during the re-embedding' });
  expect(w.json()).toMatchObject({ embeddingModel: LOCAL, embeddingStatus: 'ready' });
  gate.step();
  await expect.poll(() => gate.held(), { timeout: 10_000 }).toBe(1);
  expect((await view(a)).pending.progress).toEqual({ done: 2, total: 6 });
  // Half-way: every memory, re-embedded or not, is still recalled through the old vectors.
  for (const q of [...notes, 'written during the re-embedding'])
    expect((await recallA(q))[0]).toMatchObject({ content: q, embeddingModel: LOCAL });
  gate.release();
  expect(await run).toBe(6);

  // Switched: the provider's vectors answer, the query went to the provider, the old slot is emptied.
  expect(await view(a)).toEqual({
    configured: MODEL,
    active: { model: MODEL, dimension: 48, generation: 1 },
    pending: null,
  });
  const before = embedCalls().length;
  const after = await recallA('water the plants on friday');
  expect(after[0]).toMatchObject({ content: 'water the plants on friday', embeddingModel: MODEL });
  expect(embedCalls()).toHaveLength(before + 1);
  const inputs = embedCalls().flatMap((r) => (r.body as { input: string[] }).input);
  expect(inputs).toEqual(expect.arrayContaining([...notes, ...extra, 'written during the re-embedding']));
  expect(inputs).not.toContain('the other tenant keeps its own notes');
  const left = await t.deps.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND (embedding IS NOT NULL OR embedding_model IS NOT NULL)',
    [a.orgId],
  );
  expect(left.rows[0]!.n).toBe(0);
  // Recall's query on the new slot can use that slot's partial index.
  const e = embedderSql(MODEL, 48, `[${Array(48).fill(0.1).join(',')}]`, 1);
  await expectPlanUses(t, indexName(MODEL, 48, 1), sql`m.org_id = ${a.orgId} AND ${e.filter}`, e.distance);
  // New writes use the new embedder.
  const n = await liveA.post('/memory/memories', { content: 'stored after the switch' });
  expect(n.json()).toMatchObject({ embeddingModel: MODEL, embeddingStatus: 'ready' });
  expect((await recallA('stored after the switch'))[0]!.content).toBe('stored after the switch');

  // Tenant isolation: the other organization's memories kept their local vectors and stay its own.
  const rb = await liveB.post('/memory/memories/recall', { query: 'pay the rent on the first' });
  expect(rb.json().memories.map((m: { content: string }) => m.content)).toEqual([
    'the other tenant keeps its own notes',
  ]);
  expect(rb.json().memories[0].embeddingModel).toBe(LOCAL);
  expect((await view(b)).pending).toMatchObject({ model: MODEL });
});
