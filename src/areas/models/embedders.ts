import { eq, sql } from 'drizzle-orm';
import { LOCAL_EMBEDDER_DIMENSION, localEmbedderModelId } from '../../core/ai/local-embedder.ts';
import { ApiError } from '../../core/errors.ts';
import { perObject } from '../../core/per-object.ts';
import type { Deps } from '../../deps.ts';
import { modelsErrors } from './errors.ts';
import { resolveModelFor } from './models.ts';
import { modelEmbedders } from './tables.ts';

// Which embedder an organization's vectors come from (docs/decisions/025-per-org-embedders.md).
// EMBEDDING_MODEL names it for every organization, resolved with the organization's own key first and the
// platform's second; unset, the built-in local embedder. Each organization records its active embedder in
// model_embedders; a configured embedder different from the active one is a change the `models.reembed`
// job carries out (reembed.ts) while recall keeps using the active one.

export type EmbedderState = typeof modelEmbedders.$inferSelect;

/** One embedder, ready to call for one organization. `id` is stored beside every vector it makes. */
export type OrgEmbedder = {
  id: string;
  embed(texts: string[]): Promise<number[][]>;
};

/** Provider failures that a later attempt may get past: the memory is stored and embedded by a job. */
export const TRANSIENT_CODES = new Set([
  'MODEL_PROVIDER_UNAVAILABLE',
  'MODEL_PROVIDER_ERROR',
  'MODEL_PROVIDER_RATE_LIMITED',
]);

/** A write waits at most this long for the provider before storing the memory as pending. */
const WRITE_TIMEOUT_MS = 15_000;

/** The embedder id EMBEDDING_MODEL names (or the local one); no network, no key needed. */
export function configuredEmbedderId(deps: Deps): string {
  return deps.config.models.embeddingModel ?? localEmbedderModelId(LOCAL_EMBEDDER_DIMENSION);
}

const isLocal = (id: string) => id.startsWith('pier-local/');

function unavailable(
  model: string,
  why: Parameters<typeof modelsErrors.embeddingModelUnavailable>[1],
): ApiError {
  return modelsErrors.embeddingModelUnavailable(model, why);
}

/**
 * The embedder `id` for an organization, with its key. A configured model nobody can call (no key, an
 * unknown provider, a provider without embeddings) answers 503 EMBEDDING_MODEL_UNAVAILABLE naming the fix.
 */
export async function embedderFor(deps: Deps, orgId: string, id: string): Promise<OrgEmbedder> {
  if (isLocal(id)) {
    return { id, embed: async (texts) => (await deps.models.embed(texts, { model: id })).vectors };
  }
  let resolved: Awaited<ReturnType<typeof resolveModelFor>>;
  try {
    resolved = await resolveModelFor(deps, orgId, id);
  } catch (err) {
    if (err instanceof ApiError && (err.code === 'MODEL_NOT_AVAILABLE' || err.code === 'INVALID_MODEL'))
      throw unavailable(id, 'no provider key');
    throw err;
  }
  if (resolved.provider === 'anthropic') throw unavailable(id, 'no embeddings');
  return {
    id,
    embed: async (texts) => {
      try {
        const res = await deps.models.embed(texts, { resolved, timeoutMs: WRITE_TIMEOUT_MS });
        return res.vectors;
      } catch (err) {
        // A refused key is the operator's (or the organization's) to fix, not the caller's input.
        if (err instanceof ApiError && err.code === 'MODEL_PROVIDER_REJECTED' && err.status === 502)
          throw unavailable(id, 'key refused');
        throw err;
      }
    },
  };
}

export async function embedderState(deps: Deps, orgId: string): Promise<EmbedderState | undefined> {
  const [row] = await deps.db.orm.select().from(modelEmbedders).where(eq(modelEmbedders.orgId, orgId));
  return row;
}

/**
 * The embedder an organization's new vectors and recall queries use now: its active one; none yet → the
 * configured one (which becomes active with the first vector, see claimEmbedder). A configured embedder
 * different from the active one queues the re-embedding (once).
 */
export async function activeEmbedder(
  deps: Deps,
  orgId: string,
): Promise<{ model: string; dimension: number | null; generation: number }> {
  const configured = configuredEmbedderId(deps);
  const state = await embedderState(deps, orgId);
  if (!state) return { model: configured, dimension: null, generation: 0 };
  if (state.activeModel !== configured && state.pendingModel !== configured)
    await startReembed(deps, orgId, configured);
  else if (state.activeModel === configured && state.pendingModel)
    // Configured back to the active one before the re-embedding finished: nothing to switch to.
    await deps.db.orm
      .update(modelEmbedders)
      .set({ pendingModel: null, updatedAt: deps.clock.now() })
      .where(eq(modelEmbedders.orgId, orgId));
  return { model: state.activeModel, dimension: state.activeDimension, generation: state.generation };
}

// Recall reads the organization's active embedder on every call; it changes only when a re-embedding
// switches (reembed.ts), so recall may use a copy this young. A switch in this process forgets it at once;
// one made by another process is seen within the TTL, and until then recall keeps comparing the old
// model's query vector with the old model's vectors (the filter names the model) — never two models'.
export const RECALL_EMBEDDER_TTL_MS = 2_000;
const MAX_CACHED_ORGS = 1_000;
type Active = Awaited<ReturnType<typeof activeEmbedder>>;
const recallCacheOf = perObject<Deps, Map<string, { at: number; value: Promise<Active> }>>(() => new Map());

/** activeEmbedder for recall: the same answer, cached per organization for RECALL_EMBEDDER_TTL_MS. */
export function activeEmbedderForRecall(deps: Deps, orgId: string): Promise<Active> {
  const cache = recallCacheOf(deps);
  const hit = cache.get(orgId);
  const now = Date.now();
  if (hit && now - hit.at < RECALL_EMBEDDER_TTL_MS) return hit.value;
  const value = activeEmbedder(deps, orgId);
  if (cache.size >= MAX_CACHED_ORGS) cache.delete(cache.keys().next().value!);
  cache.set(orgId, { at: now, value });
  value.catch(() => cache.delete(orgId));
  return value;
}

/** The organization's active embedder changed (or may have): recall reads it again. */
export function forgetActiveEmbedder(deps: Deps, orgId: string): void {
  recallCacheOf(deps).delete(orgId);
}

/** Makes `model` the pending embedder of an organization and enqueues its re-embedding job. */
export async function startReembed(deps: Deps, orgId: string, model: string): Promise<void> {
  const now = deps.clock.now();
  const rows = await deps.db.orm
    .update(modelEmbedders)
    .set({
      pendingModel: model,
      reembedDone: 0,
      reembedTotal: 0,
      reembedStartedAt: now,
      reembedError: null,
      updatedAt: now,
    })
    .where(
      sql`${modelEmbedders.orgId} = ${orgId} AND ${modelEmbedders.pendingModel} IS DISTINCT FROM ${model}`,
    )
    .returning({ orgId: modelEmbedders.orgId });
  if (rows.length === 0) return;
  forgetActiveEmbedder(deps, orgId);
  deps.log.warn({ orgId, model }, 'the embedder changed; re-embedding the organization’s vectors');
  await deps.jobs.enqueue('models.reembed', { orgId, model }, { singletonKey: `reembed:${orgId}:${model}` });
}

type Tx = Parameters<Parameters<Deps['db']['orm']['transaction']>[0]>[0];

/**
 * Inside the transaction that writes vectors made by `model` for `generation`: makes `model` the
 * organization's active embedder if it has none, then holds a share lock on its row until commit, so a
 * switch (which takes the row for update) cannot slip between this check and the write. Returns whether
 * `model` and `generation` are (still) the active ones; false → the caller embeds again.
 */
export async function claimEmbedder(
  tx: Tx,
  orgId: string,
  e: { model: string; dimension: number; generation: number },
  now: Date,
): Promise<boolean> {
  const { model, dimension } = e;
  await tx
    .insert(modelEmbedders)
    .values({ orgId, activeModel: model, activeDimension: dimension, generation: 0, updatedAt: now })
    .onConflictDoNothing();
  const [row] = await tx
    .select({
      activeModel: modelEmbedders.activeModel,
      activeDimension: modelEmbedders.activeDimension,
      generation: modelEmbedders.generation,
    })
    .from(modelEmbedders)
    .where(eq(modelEmbedders.orgId, orgId))
    .for('share');
  if (row?.activeModel !== model || row.generation !== e.generation) return false;
  if (row.activeDimension !== dimension)
    throw modelsErrors.embedderDimensionMismatch(row.activeDimension, dimension, model);
  return true;
}

/** The organization's embedder for the getModelEmbedderForCli view. */
export async function embedderView(deps: Deps, orgId: string) {
  const state = await embedderState(deps, orgId);
  const configured = configuredEmbedderId(deps);
  return {
    configured,
    active: state
      ? { model: state.activeModel, dimension: state.activeDimension, generation: state.generation }
      : null,
    pending: state?.pendingModel
      ? {
          model: state.pendingModel,
          progress: { done: state.reembedDone, total: state.reembedTotal },
          startedAt: state.reembedStartedAt?.toISOString() ?? null,
          error: state.reembedError,
        }
      : null,
  };
}
