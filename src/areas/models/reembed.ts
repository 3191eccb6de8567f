import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { embedderFor, forgetActiveEmbedder } from './embedders.ts';
import { modelEmbedders } from './tables.ts';

// Re-embedding an organization after its embedder changed (docs/decisions/025-per-org-embedders.md).
// Areas that store vectors (memory) declare a VectorStore in their manifest (`provides.vectorStores`). The job `models.reembed` {orgId, model} walks
// each store in batches — the organization's rows whose vector is not from `model` — re-embeds them with
// `model`, counts progress, and finally switches the organization's active embedder in one transaction
// that first checks, under the row lock writers share, that nothing stale is left. Until then recall
// keeps searching the old embedder's vectors.

type Tx = Parameters<Parameters<Deps['db']['orm']['transaction']>[0]>[0];
export type DbLike = Deps['db']['orm'] | Tx;

/** Where a re-embedding writes: vectors from `model` for the organization's next `generation`. */
export type ReembedTarget = { model: string; generation: number };

/**
 * An area's vectors. Each row keeps two vector slots; the organization's generation parity picks the
 * active one, and a re-embedding fills the other (so recall keeps its vectors until the switch).
 */
export type VectorStore = {
  name: string;
  /** How many of the organization's rows lack a vector from the target in the target's slot. */
  countStale(deps: Deps, db: DbLike, orgId: string, target: ReembedTarget): Promise<number>;
  /** Up to `limit` such rows. */
  stale(
    deps: Deps,
    orgId: string,
    target: ReembedTarget,
    limit: number,
  ): Promise<{ id: string; text: string }[]>;
  /**
   * Stores the new vectors in the target's slot (preparing its index); a row whose text changed since
   * `stale` read it is left to its own write.
   */
  write(
    deps: Deps,
    orgId: string,
    rows: { id: string; text: string; vector: number[] }[],
    target: ReembedTarget,
    dimension: number,
  ): Promise<void>;
  /** After the switch: empties up to `limit` rows' inactive slot; returns how many it emptied. */
  clearInactive(deps: Deps, orgId: string, generation: number, limit: number): Promise<number>;
};

export const REEMBED_JOB = 'models.reembed';

async function countAll(deps: Deps, db: DbLike, orgId: string, target: ReembedTarget): Promise<number> {
  let n = 0;
  for (const s of deps.provided.vectorStores) n += await s.countStale(deps, db, orgId, target);
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
  const target = { model, generation: state.generation + 1 };
  const progress = async (done: number) =>
    db
      .update(modelEmbedders)
      .set({
        reembedDone: done,
        reembedTotal: done + (await countAll(deps, db, orgId, target)),
        updatedAt: deps.clock.now(),
      })
      .where(pendingIs);
  let done = 0;
  let dimension = 0;
  await progress(0);
  for (;;) {
    for (const store of deps.provided.vectorStores) {
      for (;;) {
        const rows = await store.stale(deps, orgId, target, batch);
        if (rows.length === 0) break;
        const vectors = await embedder.embed(rows.map((r) => r.text));
        dimension = vectors[0]!.length;
        await store.write(
          deps,
          orgId,
          rows.map((r, i) => ({ ...r, vector: vectors[i]! })),
          target,
          dimension,
        );
        done += rows.length;
        await progress(done);
      }
    }
    if (!dimension) dimension = (await embedder.embed(['dimension probe']))[0]!.length;
    // The switch: writers hold this row in share mode while they write, so once it is ours every write
    // made for the old generation has committed and is counted here; later writes see the new one.
    const switched = await db.transaction(async (tx) => {
      const [row] = await tx.select().from(modelEmbedders).where(pendingIs).for('update');
      if (!row || row.generation !== state.generation) return 'gone' as const;
      if ((await countAll(deps, tx, orgId, target)) > 0) return 'again' as const;
      await tx
        .update(modelEmbedders)
        .set({
          activeModel: model,
          activeDimension: dimension,
          generation: target.generation,
          pendingModel: null,
          reembedError: null,
          updatedAt: deps.clock.now(),
        })
        .where(eq(modelEmbedders.orgId, orgId));
      return 'switched' as const;
    });
    if (switched === 'switched') forgetActiveEmbedder(deps, orgId);
    if (switched === 'gone') return null;
    if (switched === 'switched') break;
  }
  // The old vectors are no longer searched: free their space (and their index entries).
  for (const store of deps.provided.vectorStores)
    while ((await store.clearInactive(deps, orgId, target.generation, 1000)) > 0);
  return done;
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
