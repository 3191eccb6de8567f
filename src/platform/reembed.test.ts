import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import { embedLocal } from '../core/ai/local-embedder.ts';
import { adoptEmbedder, recordEmbedder } from './embedders.ts';
import { reembedIfChanged, registerVectorStore, unregisterVectorStore } from './reembed.ts';

// A change of embedder is detected against the installation's record and the job rewrites stale vectors.

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ background: true });
});
afterAll(async () => {
  unregisterVectorStore('test-notes');
  await t?.close();
});

describe('re-embedding', () => {
  it('detects a new embedder, re-embeds every stale vector in a job and records the new embedder', async () => {
    const rows = new Map(
      Array.from({ length: 5 }, (_, i) => [
        `n${i}`,
        { text: `note number ${i}`, model: 'pier/old-embedder', vector: [0] },
      ]),
    );
    registerVectorStore({
      name: 'test-notes',
      stale: async (_deps, model, limit) =>
        [...rows]
          .filter(([, r]) => r.model !== model)
          .slice(0, limit)
          .map(([id, r]) => ({ id, text: r.text })),
      write: async (_deps, written, model) => {
        for (const w of written) Object.assign(rows.get(w.id)!, { vector: w.vector, model });
      },
    });
    await adoptEmbedder(t.deps, { model: 'pier/old-embedder', dimension: 384 });

    expect(await reembedIfChanged(t.deps)).toBe(true);
    await expect
      .poll(() => [...rows.values()].every((r) => r.model === 'pier-local/hash-384-v1'), { timeout: 20_000 })
      .toBe(true);
    expect(rows.get('n3')!.vector).toEqual(Array.from(embedLocal('note number 3')));
    await expect
      .poll(
        async () =>
          (await recordEmbedder(t.deps, { model: 'pier-local/hash-384-v1', dimension: 384 })).changed,
        {
          timeout: 5_000,
        },
      )
      .toBe(false);
    expect(await reembedIfChanged(t.deps)).toBe(false);
  });
});
