import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import {
  getMemoryForCli,
  listMemoriesForCli,
  listMemoryAgentsForCli,
  listMemoryCollectionsForCli,
  recallMemoriesForCli,
} from './dashboard-fn.ts';
import { memoryCatalogue } from './errors.ts';
import { getMemoryUsageByDayForCli } from './usage-fn.ts';
import { memoryV1 } from './v1.ts';
import { memoryVectorStore } from './vector-store.ts';
import { memoryCompactJob, memoryEmbedJob, memoryTiersJob, TIERS_CRON } from './worker.ts';

// Agent memory: memories with semantic recall and keyword search, agents, collections and compaction,
// tiers; the dashboard's read functions. Needs pgvector: without it the area's tables are not created.

export const memoryArea = defineArea({
  name: 'memory',
  errors: [memoryCatalogue],
  fns: [
    listMemoryAgentsForCli,
    listMemoryCollectionsForCli,
    listMemoriesForCli,
    getMemoryForCli,
    recallMemoriesForCli,
    getMemoryUsageByDayForCli,
  ],
  notTools: ['getMemoryUsageByDayForCli'],
  v1: [memoryV1],
  jobs: [memoryCompactJob, memoryEmbedJob, memoryTiersJob],
  schedules: [{ job: 'memory.tiers', cron: TIERS_CRON, needs: 'vector' }],
  // Recall sets hnsw.iterative_scan (pgvector 0.8.0); halfvec indexes need 0.7.0.
  migrations: [
    { area: 'memory', schema: ['src/areas/memory/tables.ts'], requires: 'vector', requiresVersion: '0.8.0' },
  ],
  provides: { vectorStores: [memoryVectorStore] },
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'memory.compact': PayloadOf<typeof memoryCompactJob>;
    'memory.embed': PayloadOf<typeof memoryEmbedJob>;
    'memory.tiers': PayloadOf<typeof memoryTiersJob>;
  }
}
