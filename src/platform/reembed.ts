import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { defineJob } from '../core/jobs.ts';
import type { Deps } from '../deps.ts';
import { embedderFor } from './embedders.ts';
import { modelEmbedders } from './models-tables.ts';

// Re-embedding an organization after its embedder changed (docs/decisions/025-per-org-embedders.md).
// Areas that store vectors (memory) register a VectorStore. The job `models.reembed` {orgId, model} walks
// each store in batches — the organization's rows whose vector is not from `model` — re-embeds them with
// `model`, counts progress, and finally switches the organization's active embedder in one transaction
// that first checks, under the row lock writers share, that nothing stale is left. Until then recall
// keeps searching the old embedder's vectors.

type Tx = Parameters<Parameters<Deps['db']['orm']['transaction']>[0]>[0];
export type DbLike = Deps['db']['orm'] | Tx;

export type VectorStore = {
  name: string;
  /** How many of the organization's rows still need a vector from `model` (pending ones included). */
  countStale(deps: Deps, db: DbLike, orgId: string, model: string): Promise<number>;
  /** Up to `limit` such rows. */
  stale(deps: Deps, orgId: string, model: string, limit: number): Promise<{ id: string; text: string }[]>;
  /**
   * Stores the new vectors, recording `model` beside each (and preparing its index); a row whose text
   * changed since `stale` read it is left to its own write.
   */
  write(
    deps: Deps,
    orgId: string,
    rows: { id: string; text: string; vector: number[] }[],
    model: string,
  ): Promise<void>;
};

const stores = new Map<string, VectorStore>();

export function registerVectorStore(store: VectorStore): void {
  stores.set(store.name, store);
}

export function unregisterVectorStore(name: string): void {
  stores.delete(name);
}

export const REEMBED_JOB = 'models.reembed';

async function countAll(deps: Deps, db: DbLike, orgId: string, model: string): Promise<number> {
  let n = 0;
  for (const s of stores.values()) n += await s.countStale(deps, db, orgId, model);
  return n;
}

/**
 * Re-embeds the organization's stale rows with `model`, then makes it active. Returns the rows rewritten,
 * or null when `model` is no longer the organization's pending embedder (the configuration moved on).
 */
export async function reembedOrg(deps: Deps, orgId: string, model: string, batch = 100) {
  const db = deps.db.orm;
  const pendingIs = sql`${modelEmbedders.orgId} = ${orgId} AND ${modelEmbedders.pendingModel} = ${model}`;
  const [state] = await db.select().from(modelEmbedders).where(pendingIs);
  if (!state) return null;
  const embedder = await embedderFor(deps, orgId, model);
  let done = 0;
  await db
    .update(modelEmbedders)
    .set({
      reembedTotal: await countAll(deps, db, orgId, model),
      reembedDone: 0,
      updatedAt: deps.clock.now(),
    })
    .where(pendingIs);
  let dimension = 0;
  for (;;) {
    for (const store of stores.values()) {
      for (;;) {
        const rows = await store.stale(deps, orgId, model, batch);
        if (rows.length === 0) break;
        const vectors = await embedder.embed(rows.map((r) => r.text));
        dimension = vectors[0]!.length;
        await store.write(
          deps,
          orgId,
          rows.map((r, i) => ({ ...r, vector: vectors[i]! })),
          model,
        );
        done += rows.length;
        await db
          .update(modelEmbedders)
          .set({
            reembedDone: done,
            reembedTotal: sql`greatest(${modelEmbedders.reembedTotal}, ${done})`,
            updatedAt: deps.clock.now(),
          })
          .where(pendingIs);
      }
    }
    if (!dimension) dimension = (await embedder.embed(['dimension probe']))[0]!.length;
    // The switch: writers hold this row in share mode while they write, so once it is ours every write
    // made with the old embedder has committed and is counted here; later writes see the new embedder.
    const switched = await db.transaction(async (tx) => {
      const [row] = await tx.select().from(modelEmbedders).where(pendingIs).for('update');
      if (!row) return 'gone' as const;
      if ((await countAll(deps, tx, orgId, model)) > 0) return 'again' as const;
      await tx
        .update(modelEmbedders)
        .set({
          activeModel: model,
          activeDimension: dimension,
          pendingModel: null,
          reembedError: null,
          updatedAt: deps.clock.now(),
        })
        .where(eq(modelEmbedders.orgId, orgId));
      return 'switched' as const;
    });
    if (switched === 'gone') return null;
    if (switched === 'switched') return done;
  }
}

export const reembedJob = defineJob({
  name: REEMBED_JOB,
  schema: z.object({ orgId: z.uuid(), model: z.string().min(1).max(300) }),
  handle: async ({ orgId, model }, { deps }: { deps: Deps }) => {
    try {
      const n = await reembedOrg(deps, orgId, model);
      deps.log.info(
        { orgId, model, rows: n },
        n === null ? 're-embedding superseded' : 're-embedding finished',
      );
    } catch (err) {
      // Shown by getModelEmbedderForCli; the job is retried (the provider may be back).
      await deps.db.orm
        .update(modelEmbedders)
        .set({ reembedError: err instanceof Error ? err.message.slice(0, 500) : 'failed' })
        .where(sql`${modelEmbedders.orgId} = ${orgId} AND ${modelEmbedders.pendingModel} = ${model}`);
      throw err;
    }
  },
  retry: { limit: 10, delaySec: 30, backoff: true },
  expireInSeconds: 4 * 60 * 60,
});
