import type { Environment } from '../../core/auth/caller.ts';
import { errors } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import { AccessTracker } from './access-tracker.ts';
import {
  defaultEmbedder,
  defaultSummarizer,
  type Embedder,
  MEMORY_DIMENSION,
  type Summarizer,
} from './embedding.ts';

/** Whose data an operation touches: always one organization and one environment. */
export type Scope = { orgId: string; environment: Environment };

export type MemoryContext = {
  deps: Deps;
  embedder: Embedder;
  summarizer: Summarizer;
  access: AccessTracker;
};

const contexts = new WeakMap<Deps, MemoryContext>();

/** One memory context per Deps (per process, or per test app). */
export function memoryContext(
  deps: Deps,
  override: Partial<Omit<MemoryContext, 'deps'>> = {},
): MemoryContext {
  let ctx = contexts.get(deps);
  if (!ctx) {
    ctx = {
      deps,
      embedder: defaultEmbedder(),
      summarizer: defaultSummarizer(),
      access: new AccessTracker(deps.db, deps.log),
      ...override,
    };
    if (ctx.embedder.dimension !== MEMORY_DIMENSION)
      throw new Error(
        `Memory needs ${MEMORY_DIMENSION}-dimension embeddings; '${ctx.embedder.id}' has ${ctx.embedder.dimension}.`,
      );
    contexts.set(deps, ctx);
  }
  return ctx;
}

export function assertVector(deps: Deps): void {
  if (!deps.db.features.has('vector')) throw errors.vectorExtensionMissing();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(s: string | null | undefined): s is string {
  return typeof s === 'string' && UUID_RE.test(s);
}
