import { z } from 'zod';
import { defineRoute, defineV1Routes, type V1Context } from '../../http/v1-kit.ts';
import * as agents from './agents.ts';
import * as collections from './collections.ts';
import { getCompactionJob, requestCompaction } from './compaction.ts';
import { assertVector, type MemoryContext, memoryContext, type Scope } from './context.ts';
import { addMemories } from './inference.ts';
import * as svc from './memories.ts';
import { recall, searchMemories } from './recall.ts';
import * as S from './schema.ts';

// HTTP only: the zod contract of each operation and a call into the service. The v1 plugin does auth
// (API keys), rate limits, idempotency and the OpenAPI document. Mounted at /v1/memory.

/** Memory needs pgvector: without it every route answers 503 VECTOR_EXTENSION_MISSING with the fix. */
function open(c: V1Context): { ctx: MemoryContext; s: Scope } {
  assertVector(c.deps);
  return { ctx: memoryContext(c.deps), s: { orgId: c.caller.orgId, environment: c.caller.environment } };
}

const V = 'VECTOR_EXTENSION_MISSING';
const agentParams = S.idParam('agentId');
const memoryParams = S.idParam('memoryId');
const colParams = S.idParam('collectionId');

const agentRoutes = [
  defineRoute({
    method: 'POST',
    url: '/agents',
    name: 'memory.agents.create',
    summary: 'Create an agent',
    body: S.createAgentBody,
    response: S.agent,
    status: 201,
    errors: [V],
    handler: async (c, { body }) => {
      const { ctx, s } = open(c);
      return agents.createAgent(ctx, s, body);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/agents',
    name: 'memory.agents.list',
    summary: 'List agents',
    query: S.listQuery,
    response: S.pageOf(S.agent),
    errors: [V],
    handler: async (c, { query }) => {
      const { ctx, s } = open(c);
      return agents.listAgents(ctx, s, query);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/agents/:agentId',
    name: 'memory.agents.get',
    summary: 'Get an agent',
    params: agentParams,
    response: S.agent,
    errors: ['AGENT_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return agents.getAgent(ctx, s, params.agentId);
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/agents/:agentId',
    name: 'memory.agents.update',
    summary: 'Update an agent',
    params: agentParams,
    body: S.updateAgentBody,
    response: S.agent,
    errors: ['AGENT_NOT_FOUND', V],
    handler: async (c, { params, body }) => {
      const { ctx, s } = open(c);
      return agents.updateAgent(ctx, s, params.agentId, body);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/agents/:agentId',
    name: 'memory.agents.delete',
    summary: 'Delete an agent and all its memories',
    params: agentParams,
    response: S.success,
    errors: ['AGENT_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return agents.deleteAgent(ctx, s, params.agentId);
    },
  }),
];

const memoryRoutes = [
  defineRoute({
    method: 'POST',
    url: '/memories',
    name: 'memory.store',
    summary: 'Store a memory',
    description:
      'Embeds the content, which is stored and returned exactly as sent. An exact duplicate (same agent and collection, not archived; compared ignoring runs of whitespace) is not stored twice: the existing memory is returned with the higher confidence. Stricter than the contract: content is 1–32,000 characters and not blank; tags at most 50 of 100 characters; metadata at most 16 KiB of JSON.',
    body: S.storeMemoryBody,
    response: S.memory,
    status: 201,
    errors: ['AGENT_NOT_FOUND', 'COLLECTION_NOT_FOUND', V],
    handler: async (c, { body }) => {
      const { ctx, s } = open(c);
      return (await svc.storeMemory(ctx, s, body)).memory;
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/memories/batch',
    name: 'memory.storeBatch',
    summary: 'Store up to 100 memories',
    description:
      'Each item follows the rules of memory.store. A full batch at the limits (100 × 32,000 characters) is accepted however the JSON is encoded (the body may be up to about 20 MB).',
    body: S.batchBody,
    bodyLimit: S.BATCH_BODY_LIMIT,
    response: S.batchReply,
    status: 201,
    errors: ['AGENT_NOT_FOUND', 'COLLECTION_NOT_FOUND', V],
    handler: async (c, { body }) => {
      const { ctx, s } = open(c);
      const out = await svc.storeMemories(ctx, s, body.agentId, body.memories);
      return { created: out.created, memories: out.memories };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/memories/add',
    name: 'memory.add',
    summary: 'Add messages, inferring facts from them',
    description:
      "Takes `content` or up to 100 chat `messages` for an agent. With `infer` (per call, or the agent's `infer`), standalone facts are extracted and reconciled with the agent's most similar memories: ADD, UPDATE (the old memory archived, with `validUntil` and lineage to the new), DELETE (archived) or NONE, each written into the history of the memories it touches with its reason. The model is `model`, else the agent's `inferModel`, else TEXT_MODEL; with none, rules split the messages into statements and resolve exact and near duplicates. Without inference each message is stored as it is.",
    body: S.addMemoriesBody,
    response: S.addMemoriesReply,
    status: 201,
    errors: [
      'AGENT_NOT_FOUND',
      'COLLECTION_NOT_FOUND',
      'MEMORY_INFERENCE_FAILED',
      'MODEL_NOT_AVAILABLE',
      'INVALID_MODEL',
      'MODEL_PROVIDER_REJECTED',
      'MODEL_PROVIDER_RATE_LIMITED',
      'MODEL_PROVIDER_ERROR',
      'MODEL_PROVIDER_UNAVAILABLE',
      V,
    ],
    handler: async (c, { body }) => {
      const { ctx, s } = open(c);
      return addMemories(ctx, s, body, 'keyId' in c.caller ? c.caller.keyId : undefined);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/memories/recall',
    name: 'memory.recall',
    summary: 'Recall memories by meaning',
    description:
      'Tiers hot and warm unless `tier`/`tiers` say otherwise; filters apply inside the ranking query. `mode: "hybrid"` fuses vector and keyword ranks.',
    body: S.recallBody,
    response: S.recallReply,
    errors: ['AGENT_NOT_FOUND', 'COLLECTION_NOT_FOUND', V],
    handler: async (c, { body }) => {
      const { ctx, s } = open(c);
      return recall(ctx, s, body);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/memories/search',
    name: 'memory.search',
    summary: 'Keyword search of content and tags',
    query: S.searchQuery,
    response: S.searchReply,
    errors: ['AGENT_NOT_FOUND', 'COLLECTION_NOT_FOUND', V],
    handler: async (c, { query }) => {
      const { ctx, s } = open(c);
      return searchMemories(ctx, s, query);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/memories/delete-many',
    name: 'memory.deleteMany',
    summary: 'Delete several memories',
    body: S.deleteManyBody,
    response: z.object({ deletedCount: z.number().int() }),
    errors: [V],
    handler: async (c, { body }) => {
      const { ctx, s } = open(c);
      return svc.deleteManyMemories(ctx, s, body.memoryIds);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/memories',
    name: 'memory.list',
    summary: 'List memories',
    query: S.listMemoriesQuery,
    response: S.pageOf(S.memory),
    errors: [V],
    handler: async (c, { query }) => {
      const { ctx, s } = open(c);
      return svc.listMemories(ctx, s, query);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/memories/:memoryId',
    name: 'memory.get',
    summary: 'Get a memory',
    params: memoryParams,
    response: S.memory,
    errors: ['MEMORY_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return svc.getMemory(ctx, s, params.memoryId);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/memories/:memoryId/history',
    name: 'memory.history',
    summary: "A memory's earlier versions",
    params: memoryParams,
    response: S.historyReply,
    errors: ['MEMORY_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return svc.memoryHistoryOf(ctx, s, params.memoryId);
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/memories/:memoryId',
    name: 'memory.update',
    summary: 'Update a memory (a new content is re-embedded)',
    params: memoryParams,
    body: S.updateMemoryBody,
    response: S.memory,
    errors: ['MEMORY_NOT_FOUND', 'AGENT_NOT_FOUND', 'COLLECTION_NOT_FOUND', 'MEMORY_DUPLICATE', V],
    handler: async (c, { params, body }) => {
      const { ctx, s } = open(c);
      return svc.updateMemory(ctx, s, params.memoryId, body);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/memories/:memoryId',
    name: 'memory.delete',
    summary: 'Delete a memory',
    params: memoryParams,
    response: S.success,
    errors: ['MEMORY_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return svc.deleteMemory(ctx, s, params.memoryId);
    },
  }),
];

const collectionRoutes = [
  defineRoute({
    method: 'POST',
    url: '/collections',
    name: 'memory.collections.create',
    summary: 'Create a collection',
    body: S.createCollectionBody,
    response: S.collection,
    status: 201,
    errors: [V],
    handler: async (c, { body }) => {
      const { ctx, s } = open(c);
      return collections.createCollection(ctx, s, body);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/collections',
    name: 'memory.collections.list',
    summary: 'List collections',
    query: S.listQuery,
    response: S.pageOf(S.collection),
    errors: [V],
    handler: async (c, { query }) => {
      const { ctx, s } = open(c);
      return collections.listCollections(ctx, s, query);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/collections/:collectionId',
    name: 'memory.collections.get',
    summary: 'Get a collection',
    params: colParams,
    response: S.collection,
    errors: ['COLLECTION_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return collections.getCollection(ctx, s, params.collectionId);
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/collections/:collectionId',
    name: 'memory.collections.update',
    summary: 'Update a collection',
    params: colParams,
    body: S.updateCollectionBody,
    response: S.collection,
    errors: ['COLLECTION_NOT_FOUND', V],
    handler: async (c, { params, body }) => {
      const { ctx, s } = open(c);
      return collections.updateCollection(ctx, s, params.collectionId, body);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/collections/:collectionId',
    name: 'memory.collections.delete',
    summary: 'Delete a collection',
    description:
      'Its memories are kept without a collection (`memories: "keep"`, default), deleted (`"delete"`), or moved (`"reassign"` with `targetCollectionId`); options in the query or a JSON body.',
    params: colParams,
    query: S.deleteCollectionOptions.partial(),
    body: S.deleteCollectionOptions.partial().nullish(),
    response: S.success,
    errors: ['COLLECTION_NOT_FOUND', V],
    handler: async (c, { params, query, body }) => {
      const { ctx, s } = open(c);
      const o = S.deleteCollectionOptions.parse({ ...query, ...(body ?? {}) });
      return collections.deleteCollection(ctx, s, params.collectionId, o);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/collections/:collectionId/stats',
    name: 'memory.collections.stats',
    summary: 'Collection statistics',
    params: colParams,
    response: S.collectionStats,
    errors: ['COLLECTION_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return collections.collectionStats(ctx, s, params.collectionId);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/collections/:collectionId/compact',
    name: 'memory.collections.compact',
    summary: 'Compact a collection (summarize near-duplicates)',
    params: colParams,
    body: S.compactBody.nullish(),
    response: S.compactReply,
    status: 202,
    errors: ['COLLECTION_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return requestCompaction(ctx, s, params.collectionId);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/compaction-jobs/:jobId',
    name: 'memory.compactionJobs.get',
    summary: 'Get a compaction job',
    params: S.idParam('jobId'),
    response: S.compactionJob,
    errors: ['COMPACTION_JOB_NOT_FOUND', V],
    handler: async (c, { params }) => {
      const { ctx, s } = open(c);
      return getCompactionJob(ctx, s, params.jobId);
    },
  }),
];

export const memoryV1 = defineV1Routes({
  name: 'memory',
  prefix: '/memory',
  routes: [...agentRoutes, ...memoryRoutes, ...collectionRoutes],
});
