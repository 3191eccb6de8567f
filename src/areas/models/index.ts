import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import { getModelEmbedderForCli } from './model-embedder-fn.ts';
import { getModelLimitsForCli, setModelAllowListForCli, setModelBudgetForCli } from './model-limits-fn.ts';
import { getModelUsageForCli } from './model-usage-fn.ts';
import { resolveModelFor } from './models.ts';
import {
  listModelProvidersForCli,
  removeModelProviderKeyForCli,
  resolveModel,
  setModelProviderKeyForCli,
} from './models-fn.ts';
import { modelProxyRoutes } from './proxy-v1.ts';
import type { VectorStore } from './reembed.ts';
import { reembedJob } from './reembed.ts';

// Models: provider keys (platform and per organization), model resolution, usage and spend, budgets, each organization's
// embedder and its re-embedding, and the OpenAI-compatible proxy at /v1/ai (role `proxy`).

export const modelsArea = defineArea({
  name: 'models',
  errors: [modelsCatalogue],
  fns: [
    setModelProviderKeyForCli,
    removeModelProviderKeyForCli,
    listModelProvidersForCli,
    resolveModel,
    getModelUsageForCli,
    getModelEmbedderForCli,
    getModelLimitsForCli,
    setModelBudgetForCli,
    setModelAllowListForCli,
  ],
  v1Plugins: [{ prefix: '/ai', plugin: modelProxyRoutes, role: 'proxy' }],
  jobs: [reembedJob],
  migrations: [{ area: 'models', schema: ['src/areas/models/tables.ts'] }],
  // The spend limits are set from the dashboard and the CLI; as tools they would pass the tools/list budget
  // (docs/mcp.md). getModelUsageForCli, a tool, already shows an agent the spend.
  notTools: ['resolveModel', 'getModelLimitsForCli', 'setModelBudgetForCli', 'setModelAllowListForCli'],
});

// Re-embedding walks every area's vectors: areas that store some (memory) list a VectorStore in
// `provides.vectorStores`, and deps.provided gathers them all.
declare module '../../deps.ts' {
  interface Provided {
    vectorStores: readonly VectorStore[];
  }
}

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'models.reembed': PayloadOf<typeof reembedJob>;
  }
}

// The MCP area lists chat completions as a tool (the proxy is a hand-written plugin, not a defineRoute).
export { chatBody, chatCompletionSchema } from './chat-completions.ts';
export {
  activeEmbedder,
  activeEmbedderForRecall,
  claimEmbedder,
  configuredEmbedderId,
  embedderFor,
  forgetActiveEmbedder,
  type OrgEmbedder,
  TRANSIENT_CODES,
} from './embedders.ts';

import { modelsCatalogue } from './errors.ts';

export { modelListed } from './model-lists.ts';
export { recordOwnModelCall } from './model-usage.ts';
export { type DbLike, type ReembedTarget, reembedOrg, type VectorStore } from './reembed.ts';
export { resolveModelFor };
