import { z } from 'zod';
import { defineJob } from '../core/jobs.ts';
import type { Deps } from '../deps.ts';
import { adoptEmbedder, recordEmbedder } from './embedders.ts';

// Re-embedding after a change of embedder. Areas that store vectors (memory) register a VectorStore; the
// job `models.reembed` walks every store in batches, re-embeds rows whose stored embedder id differs from
// the configured one, and finally records the new embedder as the installation's.

export type VectorStore = {
  name: string;
  /** Up to `limit` rows whose vector was made by an embedder other than `model`. */
  stale(deps: Deps, model: string, limit: number): Promise<{ id: string; text: string }[]>;
  /** Stores the new vectors, recording `model` beside each. */
  write(deps: Deps, rows: { id: string; vector: number[] }[], model: string): Promise<void>;
};

const stores = new Map<string, VectorStore>();

export function registerVectorStore(store: VectorStore): void {
  stores.set(store.name, store);
}

export function unregisterVectorStore(name: string): void {
  stores.delete(name);
}

export const REEMBED_JOB = 'models.reembed';

/** Re-embeds every stale row of every store; returns how many rows were rewritten. */
export async function reembedAll(deps: Deps, batch = 96): Promise<number> {
  const model = deps.models.embedderId();
  let done = 0;
  let dimension: number | undefined;
  for (const store of stores.values()) {
    for (;;) {
      const rows = await store.stale(deps, model, batch);
      if (rows.length === 0) break;
      const res = await deps.models.embed(rows.map((r) => r.text));
      dimension = res.dimension;
      await store.write(
        deps,
        rows.map((r, i) => ({ id: r.id, vector: res.vectors[i]! })),
        res.model,
      );
      done += rows.length;
    }
  }
  dimension ??= (await deps.models.embed(['dimension probe'])).dimension;
  await adoptEmbedder(deps, { model, dimension });
  return done;
}

/**
 * Compares the configured embedder with the installation's record and, on a change of model, enqueues
 * the re-embedding job (once: a singleton key). Returns whether a run was enqueued.
 */
export async function reembedIfChanged(deps: Deps): Promise<boolean> {
  const probe = await deps.models.embed(['dimension probe']);
  const { changed } = await recordEmbedder(deps, { model: probe.model, dimension: probe.dimension });
  if (!changed) return false;
  deps.log.warn({ model: probe.model }, 'the embedder changed; re-embedding stored vectors');
  await deps.jobs.enqueue(REEMBED_JOB, { batch: 96 }, { singletonKey: REEMBED_JOB });
  return true;
}

export const reembedJob = defineJob({
  name: REEMBED_JOB,
  schema: z.object({ batch: z.number().int().min(1).max(1000).default(96) }),
  handle: async ({ batch }, { deps }: { deps: Deps }) => {
    const n = await reembedAll(deps, batch);
    deps.log.info({ rows: n, model: deps.models.embedderId() }, 're-embedding finished');
  },
  retry: { limit: 5, delaySec: 60, backoff: true },
});
