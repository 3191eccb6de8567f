import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import { agentMemoryCounts, listAgents } from './agents.ts';
import { listCollections } from './collections.ts';
import { assertVector, type MemoryContext, memoryContext, type Scope } from './context.ts';
import { listMemories, memoryHistoryOf } from './memories.ts';
import { recall } from './recall.ts';
import * as S from './schema.ts';

// The dashboard's memory page (docs/decisions/021-dashboard-memory-functions.md): read-only views of an
// organization's memory for any of its members, signed in with a personal session or token — never an
// API key. Each function calls the memory service; none has SQL of its own.

const environment = z.enum(['production', 'sandbox']);
// References: any short string; one that names nothing answers 404 (or an empty list), as on v1.
const ref = z.string().trim().min(1).max(100);
const scoped = { orgSlug: slugInput, environment };
const page = (defaultLimit: number) => ({
  limit: z.number().int().min(1).max(S.LIMITS.pageMax).default(defaultLimit),
  offset: z.number().int().min(0).max(1_000_000).default(0),
});
const V = 'VECTOR_EXTENSION_MISSING';

/** Membership first (a stranger learns nothing, not even that memory is off), then pgvector. */
async function open(
  deps: Deps,
  userId: string,
  input: { orgSlug: string; environment: 'production' | 'sandbox' },
): Promise<{ ctx: MemoryContext; s: Scope }> {
  const { org } = await orgForUser(deps, userId, input.orgSlug);
  assertVector(deps);
  return { ctx: memoryContext(deps), s: { orgId: org.id, environment: input.environment } };
}

export const listMemoryAgentsForCli = defineFn({
  name: 'listMemoryAgentsForCli',
  summary: "Lists an environment's memory agents with their memory counts (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, ...page(100) }),
  output: S.pageOf(S.agent.extend({ memoryCount: z.number().int() })).extend({
    memoriesWithoutAgent: z.number().int(),
  }),
  errors: ['ORG_NOT_FOUND', V],
  handler: async ({ deps, caller }, input) => {
    const { ctx, s } = await open(deps, caller.userId, input);
    const agents = await listAgents(ctx, s, input);
    const counts = await agentMemoryCounts(
      ctx,
      s,
      agents.items.map((a) => a.id),
    );
    return {
      ...agents,
      items: agents.items.map((a) => ({ ...a, memoryCount: counts.byAgent.get(a.id) ?? 0 })),
      memoriesWithoutAgent: counts.withoutAgent,
    };
  },
});

export const listMemoryCollectionsForCli = defineFn({
  name: 'listMemoryCollectionsForCli',
  summary: "Lists an environment's memory collections with their memory counts (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, ...page(100) }),
  output: S.pageOf(S.collection),
  errors: ['ORG_NOT_FOUND', V],
  handler: async ({ deps, caller }, input) => {
    const { ctx, s } = await open(deps, caller.userId, input);
    return listCollections(ctx, s, input);
  },
});

export const listMemoriesForCli = defineFn({
  name: 'listMemoriesForCli',
  summary: "Lists an environment's memories, newest first, by agent, collection, type and tier (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    agentId: ref.optional(),
    collectionId: ref.optional(),
    type: z.enum(S.MEMORY_TYPES).optional(),
    tier: z.enum(S.MEMORY_TIERS).optional(),
    ...page(20),
  }),
  output: S.pageOf(S.memory),
  errors: ['ORG_NOT_FOUND', V],
  handler: async ({ deps, caller }, input) => {
    const { ctx, s } = await open(deps, caller.userId, input);
    return listMemories(ctx, s, input);
  },
});

export const getMemoryForCli = defineFn({
  name: 'getMemoryForCli',
  summary: 'One memory with its earlier versions, oldest first (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, memoryId: ref }),
  output: z.object({ memory: S.memory, history: z.array(S.historyEntry) }),
  errors: ['ORG_NOT_FOUND', 'MEMORY_NOT_FOUND', V],
  handler: async ({ deps, caller }, input) => {
    const { ctx, s } = await open(deps, caller.userId, input);
    const h = await memoryHistoryOf(ctx, s, input.memoryId);
    return { memory: h.current, history: h.items };
  },
});

export const recallMemoriesForCli = defineFn({
  name: 'recallMemoriesForCli',
  summary:
    'Tries a recall as v1 would answer it, with each similarity; a look, not a use: access counts stay unchanged (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({
    ...scoped,
    query: z.string().trim().min(1).max(S.LIMITS.contentChars),
    agentId: ref.optional(),
    collectionId: ref.optional(),
    type: z.enum(S.MEMORY_TYPES).optional(),
    tiers: z.array(z.enum(S.MEMORY_TIERS)).min(1).max(4).optional(),
    limit: z.number().int().min(1).max(S.LIMITS.recallMax).default(10),
    threshold: z.number().min(0).max(1).optional(),
    mode: z.enum(['hybrid', 'vector', 'keyword']).default('hybrid'),
  }),
  output: S.recallReply,
  errors: ['ORG_NOT_FOUND', 'AGENT_NOT_FOUND', 'COLLECTION_NOT_FOUND', V],
  handler: async ({ deps, caller }, input) => {
    const { ctx, s } = await open(deps, caller.userId, input);
    const { orgSlug: _o, environment: _e, ...query } = input;
    return recall(ctx, s, query, { countAccess: false });
  },
});
