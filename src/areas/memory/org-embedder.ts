import { modelErrors } from '../../core/ai/errors.ts';
import { ApiError, errors } from '../../core/errors.ts';
import { perObject } from '../../core/per-object.ts';
import { activeEmbedder, activeEmbedderForRecall, claimEmbedder, TRANSIENT_CODES } from '../models/index.ts';
import type { MemoryContext, Scope } from './context.ts';
import { ensureVectorIndex, slotOf } from './vector-indexes.ts';

// Embedding for memory writes and recall through the organization's active embedder (platform/
// embedders.ts). A write whose provider is down or timing out is not refused: the memory is stored
// `pending` and the job `memory.embed` embeds it later; pending memories are not recalled until then.

type Tx = Parameters<Parameters<MemoryContext['deps']['db']['orm']['transaction']>[0]>[0];

export type Embedded =
  | { model: string; generation: number; dimension: number; vectors: number[][] }
  | { model: string; generation: number; dimension: null; vectors: null };

/**
 * A memory's vector columns for a write of `e`'s i-th vector: the active slot gets it (null while
 * pending), the other slot is emptied so a re-embedding in progress embeds the new content too.
 */
export function vectorColumns(e: Embedded, i: number) {
  const v = e.vectors?.[i] ?? null;
  return slotOf(e.generation).vec === 'embedding'
    ? { embedding: v, embeddingModel: e.model, embeddingAlt: null, embeddingAltModel: null }
    : { embeddingAlt: v, embeddingAltModel: e.model, embedding: null, embeddingModel: null };
}

/** Seconds before the first try of a pending memory's embedding (the provider just failed). */
export const PENDING_RETRY_SEC = 10;

/** Embeds texts with the organization's active embedder; a transient provider failure → pending. */
export async function embedForWrite(ctx: MemoryContext, orgId: string, texts: string[]): Promise<Embedded> {
  const { model, generation } = await activeEmbedder(ctx.deps, orgId);
  const embedder = await ctx.embedderFor(orgId, model);
  try {
    const vectors = await embedder.embed(texts);
    const dimension = vectors[0]!.length;
    if (vectors.length !== texts.length || vectors.some((v) => v.length !== dimension))
      throw modelErrors.modelProviderError(model, undefined);
    await ensureVectorIndex(ctx.deps, model, dimension, generation);
    return { model, generation, dimension, vectors };
  } catch (err) {
    if (err instanceof ApiError && TRANSIENT_CODES.has(err.code)) {
      ctx.deps.log.warn({ orgId, model, code: err.code }, 'embedding deferred: the memory is stored pending');
      return { model, generation, dimension: null, vectors: null };
    }
    throw err;
  }
}

// Recent query vectors per organization and embedder: agents ask the same questions again, and with a
// provider each miss is a network call. An embedder's vector for a text never changes, so a hit is exact.
const QUERY_CACHE_MAX = 2_000;
const queryCacheOf = perObject<MemoryContext, Map<string, number[]>>(() => new Map());

async function queryVector(
  ctx: MemoryContext,
  orgId: string,
  model: string,
  query: string,
): Promise<number[]> {
  const cache = queryCacheOf(ctx);
  const key = `${orgId}\u0000${model}\u0000${query}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key); // least recently used goes first
    cache.set(key, hit);
    return hit;
  }
  const embedder = await ctx.embedderFor(orgId, model);
  const [vector] = await embedder.embed([query]);
  if (cache.size >= QUERY_CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, vector!);
  return vector!;
}

/** The query vector of a recall, with the embedder (and its size) whose vectors it is compared with. */
export async function embedForRecall(ctx: MemoryContext, orgId: string, query: string) {
  const active = await activeEmbedderForRecall(ctx.deps, orgId);
  const vector = await queryVector(ctx, orgId, active.model, query);
  return {
    model: active.model,
    generation: active.generation,
    dimension: active.dimension ?? vector!.length,
    vector: vector!,
  };
}

/**
 * Embeds, then writes inside a transaction that holds the organization's embedder row (claimEmbedder):
 * if the active embedder changed meanwhile (a re-embedding just switched), embeds again with the new one.
 * Pending writes need no claim: whichever embedder is active when the job runs embeds them.
 */
export async function writeEmbedded<T>(
  ctx: MemoryContext,
  s: Scope,
  texts: string[],
  write: (tx: Tx, e: Embedded | null) => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const e = texts.length ? await embedForWrite(ctx, s.orgId, texts) : null;
    const result = await ctx.deps.db.orm.transaction(async (tx) => {
      if (e?.vectors && !(await claimEmbedder(tx, s.orgId, e, ctx.deps.clock.now())))
        return { again: true as const };
      return { again: false as const, value: await write(tx, e) };
    });
    if (!result.again) {
      if (e && !e.vectors) await schedulePendingEmbedding(ctx, s.orgId);
      return result.value;
    }
    if (attempt >= 3) throw errors.internal();
  }
}

export async function schedulePendingEmbedding(ctx: MemoryContext, orgId: string): Promise<void> {
  const startAfter = new Date(Date.now() + PENDING_RETRY_SEC * 1000);
  await ctx.deps.jobs.enqueue(
    'memory.embed',
    { orgId },
    { singletonKey: `memory.embed:${orgId}`, startAfter },
  );
}
