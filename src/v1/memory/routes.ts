import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { resolveCaller } from '../../core/auth/resolve.ts';
import { errors } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import * as agents from './agents.ts';
import * as collections from './collections.ts';
import { getCompactionJob, requestCompaction } from './compaction.ts';
import { assertVector, memoryContext, type Scope } from './context.ts';
import { recall, searchMemories } from './recall.ts';
import * as S from './schema.ts';
import * as svc from './service.ts';

// HTTP only: parse (zod), call the service, shape the reply. Mounted at /v1/memory.

const errorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const errorReplies = Object.fromEntries([400, 401, 403, 404, 409, 429, 503].map((s) => [s, errorSchema]));

function scopeOf(req: FastifyRequest): Scope {
  const c = req.caller;
  if (c?.kind !== 'apikey') throw errors.authRequired();
  return { orgId: c.orgId, environment: c.environment };
}

export async function memoryRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const ctx = () => memoryContext(deps);

  // API keys only; the scope (organization + environment) comes from the key. Memory needs pgvector:
  // without it every memory route answers 503 with the fix, and the rest of Pier runs on.
  app.addHook('onRequest', async (req) => {
    req.caller = await resolveCaller(req, deps.credentials);
    if (!req.caller)
      throw errors.authRequired('Send an API key: Authorization: Bearer sk_live… or sk_test….');
    if (req.caller.kind !== 'apikey')
      throw errors.forbidden('The v1 API takes an API key (sk_live or sk_test).');
    assertVector(deps);
  });

  const op = (operationId: string, summary: string) => ({ operationId, summary, tags: ['memory'] });

  // Agents
  r.post(
    '/agents',
    {
      schema: {
        ...op('memory.agents.create', 'Create an agent'),
        body: S.createAgentBody,
        response: { 201: S.agent, ...errorReplies },
      },
    },
    async (req, reply) => reply.status(201).send(await agents.createAgent(ctx(), scopeOf(req), req.body)),
  );
  r.get(
    '/agents',
    {
      schema: {
        ...op('memory.agents.list', 'List agents'),
        querystring: S.listQuery,
        response: { 200: S.pageOf(S.agent), ...errorReplies },
      },
    },
    async (req) => agents.listAgents(ctx(), scopeOf(req), req.query),
  );
  const agentParams = S.idParam('agentId');
  r.get(
    '/agents/:agentId',
    {
      schema: {
        ...op('memory.agents.get', 'Get an agent'),
        params: agentParams,
        response: { 200: S.agent, ...errorReplies },
      },
    },
    async (req) => agents.getAgent(ctx(), scopeOf(req), req.params.agentId),
  );
  r.patch(
    '/agents/:agentId',
    {
      schema: {
        ...op('memory.agents.update', 'Update an agent'),
        params: agentParams,
        body: S.updateAgentBody,
        response: { 200: S.agent, ...errorReplies },
      },
    },
    async (req) => agents.updateAgent(ctx(), scopeOf(req), req.params.agentId, req.body),
  );
  r.delete(
    '/agents/:agentId',
    {
      schema: {
        ...op('memory.agents.delete', 'Delete an agent and all its memories'),
        params: agentParams,
        response: { 200: S.success, ...errorReplies },
      },
    },
    async (req) => agents.deleteAgent(ctx(), scopeOf(req), req.params.agentId),
  );

  // Memories
  r.post(
    '/memories',
    {
      schema: {
        ...op('memory.store', 'Store a memory (201; 200 when the same content already exists)'),
        body: S.storeMemoryBody,
        response: { 200: S.memory, 201: S.memory, ...errorReplies },
      },
    },
    async (req, reply) => {
      const { memory, created } = await svc.storeMemory(ctx(), scopeOf(req), req.body);
      return reply.status(created ? 201 : 200).send(memory);
    },
  );
  r.post(
    '/memories/batch',
    {
      schema: {
        ...op('memory.storeBatch', 'Store up to 100 memories'),
        body: S.batchBody,
        response: { 201: S.batchReply, ...errorReplies },
      },
    },
    async (req, reply) => {
      const out = await svc.storeMemories(ctx(), scopeOf(req), req.body.agentId, req.body.memories);
      return reply.status(201).send({ created: out.created, memories: out.memories });
    },
  );
  r.post(
    '/memories/recall',
    {
      schema: {
        ...op('memory.recall', 'Recall memories by meaning'),
        body: S.recallBody,
        response: { 200: S.recallReply, ...errorReplies },
      },
    },
    async (req) => recall(ctx(), scopeOf(req), req.body),
  );
  r.get(
    '/memories/search',
    {
      schema: {
        ...op('memory.search', 'Keyword search of content and tags'),
        querystring: S.searchQuery,
        response: { 200: S.searchReply, ...errorReplies },
      },
    },
    async (req) => searchMemories(ctx(), scopeOf(req), req.query),
  );
  r.post(
    '/memories/delete-many',
    {
      schema: {
        ...op('memory.deleteMany', 'Delete several memories'),
        body: S.deleteManyBody,
        response: { 200: z.object({ deletedCount: z.number().int() }), ...errorReplies },
      },
    },
    async (req) => svc.deleteManyMemories(ctx(), scopeOf(req), req.body.memoryIds),
  );
  r.get(
    '/memories',
    {
      schema: {
        ...op('memory.list', 'List memories'),
        querystring: S.listMemoriesQuery,
        response: { 200: S.pageOf(S.memory), ...errorReplies },
      },
    },
    async (req) => svc.listMemories(ctx(), scopeOf(req), req.query),
  );
  const memoryParams = S.idParam('memoryId');
  r.get(
    '/memories/:memoryId',
    {
      schema: {
        ...op('memory.get', 'Get a memory'),
        params: memoryParams,
        response: { 200: S.memory, ...errorReplies },
      },
    },
    async (req) => svc.getMemory(ctx(), scopeOf(req), req.params.memoryId),
  );
  r.get(
    '/memories/:memoryId/history',
    {
      schema: {
        ...op('memory.history', "A memory's earlier versions"),
        params: memoryParams,
        response: { 200: S.historyReply, ...errorReplies },
      },
    },
    async (req) => svc.memoryHistoryOf(ctx(), scopeOf(req), req.params.memoryId),
  );
  r.patch(
    '/memories/:memoryId',
    {
      schema: {
        ...op('memory.update', 'Update a memory'),
        params: memoryParams,
        body: S.updateMemoryBody,
        response: { 200: S.memory, ...errorReplies },
      },
    },
    async (req) => svc.updateMemory(ctx(), scopeOf(req), req.params.memoryId, req.body),
  );
  r.delete(
    '/memories/:memoryId',
    {
      schema: {
        ...op('memory.delete', 'Delete a memory'),
        params: memoryParams,
        response: { 200: S.success, ...errorReplies },
      },
    },
    async (req) => svc.deleteMemory(ctx(), scopeOf(req), req.params.memoryId),
  );

  // Collections
  r.post(
    '/collections',
    {
      schema: {
        ...op('memory.collections.create', 'Create a collection'),
        body: S.createCollectionBody,
        response: { 201: S.collection, ...errorReplies },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await collections.createCollection(ctx(), scopeOf(req), req.body)),
  );
  r.get(
    '/collections',
    {
      schema: {
        ...op('memory.collections.list', 'List collections'),
        querystring: S.listQuery,
        response: { 200: S.pageOf(S.collection), ...errorReplies },
      },
    },
    async (req) => collections.listCollections(ctx(), scopeOf(req), req.query),
  );
  const colParams = S.idParam('collectionId');
  r.get(
    '/collections/:collectionId',
    {
      schema: {
        ...op('memory.collections.get', 'Get a collection'),
        params: colParams,
        response: { 200: S.collection, ...errorReplies },
      },
    },
    async (req) => collections.getCollection(ctx(), scopeOf(req), req.params.collectionId),
  );
  r.patch(
    '/collections/:collectionId',
    {
      schema: {
        ...op('memory.collections.update', 'Update a collection'),
        params: colParams,
        body: S.updateCollectionBody,
        response: { 200: S.collection, ...errorReplies },
      },
    },
    async (req) => collections.updateCollection(ctx(), scopeOf(req), req.params.collectionId, req.body),
  );
  r.delete(
    '/collections/:collectionId',
    {
      schema: {
        ...op(
          'memory.collections.delete',
          'Delete a collection; its memories are kept, deleted or reassigned',
        ),
        params: colParams,
        querystring: S.deleteCollectionOptions.partial(),
        body: S.deleteCollectionOptions.partial().nullish(),
        response: { 200: S.success, ...errorReplies },
      },
    },
    async (req) => {
      const o = S.deleteCollectionOptions.parse({ ...req.query, ...(req.body ?? {}) });
      return collections.deleteCollection(ctx(), scopeOf(req), req.params.collectionId, o);
    },
  );
  r.get(
    '/collections/:collectionId/stats',
    {
      schema: {
        ...op('memory.collections.stats', 'Collection statistics'),
        params: colParams,
        response: { 200: S.collectionStats, ...errorReplies },
      },
    },
    async (req) => collections.collectionStats(ctx(), scopeOf(req), req.params.collectionId),
  );
  r.post(
    '/collections/:collectionId/compact',
    {
      schema: {
        ...op('memory.collections.compact', 'Compact a collection (summarize near-duplicates)'),
        params: colParams,
        body: S.compactBody.nullish(),
        response: { 202: S.compactReply, ...errorReplies },
      },
    },
    async (req, reply) =>
      reply.status(202).send(await requestCompaction(ctx(), scopeOf(req), req.params.collectionId)),
  );
  r.get(
    '/compaction-jobs/:jobId',
    {
      schema: {
        ...op('memory.compactionJobs.get', 'Get a compaction job'),
        params: S.idParam('jobId'),
        response: { 200: S.compactionJob, ...errorReplies },
      },
    },
    async (req) => getCompactionJob(ctx(), scopeOf(req), req.params.jobId),
  );
}
