import { eq } from 'drizzle-orm';
import { errors } from '../core/errors.ts';
import type { Deps } from '../deps.ts';
import { modelEmbedder } from './models-tables.ts';

// The installation's embedder record: which model made the stored vectors, and their dimension.
// Areas that store vectors (memory) call recordEmbedder after embedding and keep `model` beside each vector.

export type EmbedderRecord = { model: string; dimension: number };

/**
 * Records the first embedder used and returns the record. A different model with the same dimension is a
 * change (`changed: true`) that needs re-embedding; a different dimension is refused, because stored
 * vector columns have a fixed size.
 */
export async function recordEmbedder(
  deps: Deps,
  current: EmbedderRecord,
): Promise<{ recorded: EmbedderRecord; changed: boolean }> {
  await deps.db.orm
    .insert(modelEmbedder)
    .values({ id: 'installation', ...current, recordedAt: deps.clock.now() })
    .onConflictDoNothing();
  const [row] = await deps.db.orm.select().from(modelEmbedder).where(eq(modelEmbedder.id, 'installation'));
  const recorded = { model: row!.model, dimension: row!.dimension };
  if (recorded.dimension !== current.dimension)
    throw errors.embedderDimensionMismatch(recorded.dimension, current.dimension, current.model);
  return { recorded, changed: recorded.model !== current.model };
}

/** After a re-embedding run finished: the new embedder becomes the recorded one. */
export async function adoptEmbedder(deps: Deps, current: EmbedderRecord): Promise<void> {
  await deps.db.orm
    .insert(modelEmbedder)
    .values({ id: 'installation', ...current, recordedAt: deps.clock.now() })
    .onConflictDoUpdate({ target: modelEmbedder.id, set: { ...current, recordedAt: deps.clock.now() } });
}
