import { defineArea } from '../manifest.ts';
import { getModelEmbedderForCli } from './model-embedder-fn.ts';
import { getModelUsageForCli } from './model-usage.ts';
import {
  listModelProvidersForCli,
  removeModelProviderKeyForCli,
  resolveModel,
  resolveModelFor,
  setModelProviderKeyForCli,
} from './models.ts';
import { reembedJob } from './reembed.ts';
import { modelProxyRoutes } from './v1-proxy.ts';

// Models: provider keys (platform and per organization), model resolution, usage, each organization's
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
  ],
  v1Plugins: [{ prefix: '/ai', plugin: modelProxyRoutes, role: 'proxy' }],
  jobs: [reembedJob],
  migrations: [{ area: 'models', schema: ['src/areas/models/tables.ts'] }],
  notTools: ['resolveModel'],
});

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

export { type DbLike, type ReembedTarget, reembedOrg, type VectorStore } from './reembed.ts';
export { resolveModelFor };
