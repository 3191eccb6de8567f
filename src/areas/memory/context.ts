import type { Environment } from '../../core/auth/caller.ts';
import type { Deps } from '../../deps.ts';
import { embedderFor, type OrgEmbedder } from '../models/index.ts';
import { AccessTracker } from './access-tracker.ts';
import { defaultSummarizer, type Summarizer } from './embedding.ts';
import { memoryErrors } from './errors.ts';

/** Whose data an operation touches: always one organization and one environment. */
export type Scope = { orgId: string; environment: Environment };

export type MemoryContext = {
  deps: Deps;
  /** The embedder `model` for an organization (platform/embedders.ts; tests may replace it). */
  embedderFor(orgId: string, model: string): Promise<OrgEmbedder>;
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
      embedderFor: (orgId, model) => embedderFor(deps, orgId, model),
      summarizer: defaultSummarizer(),
      access: new AccessTracker(deps.db, deps.log),
      ...override,
    };
    contexts.set(deps, ctx);
  }
  return ctx;
}

export function assertVector(deps: Deps): void {
  if (!deps.db.features.has('vector')) throw memoryErrors.vectorExtensionMissing();
}
