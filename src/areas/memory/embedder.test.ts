import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { expectPlanUses, hasVector, memoryTenant } from '../../../test/memory-kit.ts';
import { embedLocal } from '../../core/ai/local-embedder.ts';
import { embedderSql, ensureVectorIndex, indexName } from './vector-indexes.ts';
import { embedPendingMemories } from './vector-store.ts';

// Memory through a configured embedding model (docs/decisions/025-per-org-embedders.md): the fake OpenAI
// server on 127.0.0.1 answers /v1/embeddings with deterministic 64-dimension vectors.

const MODEL = 'openai/text-embedding-3-small';
const DIM = 64;
let fake: FakeServer;
let t: TestApp;

const providerEnv = (url: string, key = 'sk-platform-key') => ({
  EMBEDDING_MODEL: MODEL,
  ...(key ? { OPENAI_API_KEY: key } : {}),
  OPENAI_BASE_URL: `${url}/v1`,
  MODEL_MAX_RETRIES: '0',
  MODEL_RETRY_BASE_MS: '5',
});

type Req = { path: string; headers: Record<string, unknown>; body: { input: string[] | string } };
const embedCalls = () => (fake.requests as Req[]).filter((r) => r.path === '/v1/embeddings');
const inputs = (r: Req) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]);

async function jobsNamed(app: TestApp, name: string, orgId: string): Promise<number> {
  const r = await app.deps.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND data->>'orgId' = $2`,
    [name, orgId],
  );
  return r.rows[0]!.n;
}

beforeAll(async () => {
  fake = await startOpenAIServer('openai', { embedDim: DIM });
  t = await testApp({ env: providerEnv(fake.url), queue: true });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(({ skip }) => {
  // memories.test.ts asserts the 503 answer on a database without pgvector.
  if (!hasVector(t)) skip();
});

describe('memory with a configured embedding model', () => {
  it('embeds stored and updated content through the provider, with the organization’s key first', async () => {
    const { live, tenant } = await memoryTenant(t);
    const before = embedCalls().length;
    const res = await live.post('/memory/memories', { content: 'The customer prefers invoices as PDF' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ embeddingModel: MODEL, embeddingStatus: 'ready' });
    const call = embedCalls().at(-1)!;
    expect(embedCalls()).toHaveLength(before + 1);
    expect(inputs(call)).toEqual(['The customer prefers invoices as PDF']);
    expect(call.headers.authorization).toBe('Bearer sk-platform-key');

    // The organization's own key wins over the platform's.
    const set = await t.call(
      'setModelProviderKeyForCli',
      { orgSlug: tenant.org.slug, provider: 'openai', apiKey: 'sk-org-own-key' },
      tenant.owner.token,
    );
    expect(set.statusCode).toBe(200);
    const upd = await live.patch(`/memory/memories/${res.json().id}`, { content: 'Invoices go out by post' });
    expect(upd.statusCode).toBe(200);
    expect(inputs(embedCalls().at(-1)!)).toEqual(['Invoices go out by post']);
    expect(embedCalls().at(-1)!.headers.authorization).toBe('Bearer sk-org-own-key');

    // Recall embeds the query with the same model and compares with the provider's vectors.
    const r = await live.post('/memory/memories/recall', { query: 'Invoices go out by post' });
    expect(r.statusCode).toBe(200);
    expect(inputs(embedCalls().at(-1)!)).toEqual(['Invoices go out by post']);
    expect(r.json().memories[0]).toMatchObject({ content: 'Invoices go out by post', embeddingModel: MODEL });
    expect(r.json().memories[0].similarity).toBeCloseTo(1, 4);

    const view = await t.call('getModelEmbedderForCli', { orgSlug: tenant.org.slug }, tenant.owner.token);
    expect(view.json()).toEqual({
      configured: MODEL,
      active: { model: MODEL, dimension: DIM, generation: 0 },
      pending: null,
    });
  });

  it('embeds a batch of 100 memories in one provider call', async () => {
    const { live } = await memoryTenant(t);
    const before = embedCalls().length;
    const memories = Array.from({ length: 100 }, (_, i) => ({ content: `batch note number ${i}` }));
    const res = await live.post('/memory/memories/batch', { memories });
    expect(res.statusCode).toBe(201);
    expect(res.json().created).toBe(100);
    expect(embedCalls()).toHaveLength(before + 1);
    expect(inputs(embedCalls().at(-1)!)).toHaveLength(100);
  });

  it('answers 400 MODEL_PROVIDER_REJECTED when the provider refuses the input, storing nothing', async () => {
    const { live } = await memoryTenant(t);
    fake.failNext(400);
    const res = await live.post('/memory/memories', { content: 'refused by the provider' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('MODEL_PROVIDER_REJECTED');
    expect((await live.get('/memory/memories')).json().total).toBe(0);
  });

  it('stores a memory pending while the provider is down, and a job embeds it later', async () => {
    const { live, orgId } = await memoryTenant(t);
    await live.post('/memory/memories', { content: 'first note, embedded at once' });
    fake.failNext(503);
    const res = await live.post('/memory/memories', { content: 'the gate code is 4711' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ embeddingStatus: 'pending', embeddingModel: MODEL });
    // Not recalled until embedded; keyword search finds it all the same.
    const r1 = await live.post('/memory/memories/recall', { query: 'the gate code is 4711' });
    expect(r1.json().memories.map((m: { id: string }) => m.id)).not.toContain(res.json().id);
    expect((await live.get('/memory/memories/search', { q: 'gate code' })).json().total).toBe(1);
    expect(await jobsNamed(t, 'memory.embed', orgId)).toBe(1);

    // The job's work, run here (the provider is back).
    expect(await embedPendingMemories(t.deps, orgId)).toBe(1);
    const got = await live.get(`/memory/memories/${res.json().id}`);
    expect(got.json().embeddingStatus).toBe('ready');
    const r2 = await live.post('/memory/memories/recall', { query: 'the gate code is 4711' });
    expect(r2.json().memories[0].id).toBe(res.json().id);
  });

  it('keeps the provider failing a job: the pending memory stays pending and the job retries', async () => {
    const { live, orgId } = await memoryTenant(t);
    await live.post('/memory/memories', { content: 'an embedded note' });
    fake.failNext(503, 2);
    const res = await live.post('/memory/memories', { content: 'a note stored while the provider is down' });
    expect(res.json().embeddingStatus).toBe('pending');
    await expect(embedPendingMemories(t.deps, orgId)).rejects.toThrow(/still unavailable/);
    expect((await live.get(`/memory/memories/${res.json().id}`)).json().embeddingStatus).toBe('pending');
  });

  it('uses the partial HNSW index of the embedder, cast to its size (EXPLAIN)', async () => {
    const { live, orgId } = await memoryTenant(t);
    await live.post('/memory/memories', { content: 'a note to make the index exist' });
    const uses = (model: string, dim: number) => {
      const e = embedderSql(model, dim, `[${Array.from(embedLocal('query', dim)).join(',')}]`);
      const where = sql`m.org_id = ${orgId} AND m.environment = 'production' AND ${e.filter}`;
      return expectPlanUses(t, indexName(model, dim), where, e.distance);
    };
    await uses(MODEL, DIM);
    // The local embedder's index comes with the migration; a large embedder gets a halfvec index.
    await uses('pier-local/hash-384-v1', 384);
    await ensureVectorIndex(t.deps, 'pier/big-embedder', 3072, 0);
    await uses('pier/big-embedder', 3072);
    const def = await t.deps.db.query<{ indexdef: string }>(
      'SELECT indexdef FROM pg_indexes WHERE indexname = $1',
      [indexName('pier/big-embedder', 3072)],
    );
    expect(def.rows[0]!.indexdef).toMatch(/halfvec\(3072\).*WHERE.*pier\/big-embedder/);
  });
});

describe('an embedding model nobody can call', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await testApp({ env: providerEnv(fake.url, '') });
  });
  afterAll(async () => {
    await bare?.close();
  });

  it('answers 503 EMBEDDING_MODEL_UNAVAILABLE naming the fix, until the organization stores a key', async () => {
    const { live, tenant } = await memoryTenant(bare);
    const res = await live.post('/memory/memories', { content: 'no key anywhere' });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('EMBEDDING_MODEL_UNAVAILABLE');
    expect(res.json().error.message).toMatch(/setModelProviderKeyForCli|OPENAI_API_KEY/);
    const recall = await live.post('/memory/memories/recall', { query: 'anything' });
    expect(recall.statusCode).toBe(503);
    await bare.call(
      'setModelProviderKeyForCli',
      { orgSlug: tenant.org.slug, provider: 'openai', apiKey: 'sk-org-own-key' },
      tenant.owner.token,
    );
    const ok = await live.post('/memory/memories', { content: 'now with the organization’s key' });
    expect(ok.statusCode).toBe(201);
    expect(embedCalls().at(-1)!.headers.authorization).toBe('Bearer sk-org-own-key');
  });

  it('answers 503 for a pier/ model when the operator has no model server', async () => {
    const app = await testApp({ env: { EMBEDDING_MODEL: 'pier/nomic-embed-text' } });
    try {
      if (!hasVector(app)) return;
      const { live } = await memoryTenant(app);
      const res = await live.post('/memory/memories', { content: 'x' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('EMBEDDING_MODEL_UNAVAILABLE');
    } finally {
      await app.close();
    }
  });
});
