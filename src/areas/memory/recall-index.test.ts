import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { memoryTenant } from '../../../test/memory-kit.ts';
import { RECALL_TUNING } from './recall.ts';

// Recall over more rows than the exact scan takes goes through the embedder's partial HNSW index, cast to its
// size, with pgvector 0.8's hnsw.iterative_scan so that filters never starve the top-k. Real stores reach that
// path past 2,000 matching rows; here the threshold is lowered so the same SQL runs on a small store, on
// PGlite's bundled pgvector and on the PostgreSQL server's (scripts/install-pgvector.sh).

let t: TestApp;
const exactScanMax = RECALL_TUNING.exactScanMax;
beforeAll(async () => {
  t = await testApp();
});
afterEach(() => {
  RECALL_TUNING.exactScanMax = exactScanMax;
});
afterAll(async () => {
  await t?.close();
});

type M = { id: string; content: string; similarity: number };
const ids = (r: { json(): { memories: M[] } }) => r.json().memories.map((m) => m.id);
// Similar contents tie; which of the tied rows fill the last places may differ between the two paths.
const sims = (r: { json(): { memories: M[] } }) => r.json().memories.map((m) => m.similarity.toFixed(4));

describe('recall through the HNSW index', () => {
  it('answers like the exact scan, filters included', async () => {
    const { live } = await memoryTenant(t);
    // Thirty close matches of one type, ten far ones of another: a type filter keeps only the far ones,
    // which the index walk reaches only by iterating past the close ones.
    const close = await live.post('/memory/memories/batch', {
      memories: Array.from({ length: 30 }, (_, i) => ({
        content: `Invoice ${i} for the Berlin office was paid by bank transfer`,
        type: 'semantic',
      })),
    });
    expect(close.statusCode).toBe(201);
    const far = await live.post('/memory/memories/batch', {
      memories: Array.from({ length: 10 }, (_, i) => ({
        content: `Meeting ${i} notes: the garden team plans tulips and roses`,
        type: 'episodic',
      })),
    });
    expect(far.statusCode).toBe(201);

    const queries = [
      { query: 'invoice paid by bank transfer', limit: 5 },
      { query: 'invoice paid by bank transfer', limit: 5, type: 'episodic' },
      { query: 'garden tulips', limit: 20 },
    ];
    for (const q of queries) {
      RECALL_TUNING.exactScanMax = 100_000;
      const exact = await live.post('/memory/memories/recall', q);
      RECALL_TUNING.exactScanMax = 3;
      const indexed = await live.post('/memory/memories/recall', q);
      expect(indexed.statusCode, JSON.stringify(indexed.json())).toBe(200);
      expect(sims(indexed), JSON.stringify(q)).toEqual(sims(exact));
      expect(ids(indexed).length).toBe(Math.min(q.limit, q.type === 'episodic' ? 10 : 40));
    }
    const filtered = await live.post('/memory/memories/recall', queries[1]);
    for (const m of filtered.json().memories as M[]) expect(m.content).toMatch(/^Meeting/);
  });
});
