import { z } from 'zod';
import { offsetPageSchema, offsetQuery } from '../../core/pagination.ts';

// One zod schema per operation: the routes validate with them and /v1/openapi.json is generated from them.

export const MEMORY_TYPES = ['episodic', 'semantic', 'procedural', 'identity'] as const;
export const MEMORY_TIERS = ['hot', 'warm', 'cold', 'archived'] as const;
export const EVENT_PRECISIONS = ['instant', 'day', 'week', 'month', 'year'] as const;
export const INFER_DECISIONS = ['ADD', 'UPDATE', 'DELETE', 'NONE'] as const;
export const LIMITS = {
  contentChars: 32_000,
  tags: 50,
  tagChars: 100,
  metadataBytes: 16_384,
  batch: 100,
  deleteMany: 1000,
  pageMax: 100,
  recallMax: 100,
  nameChars: 200,
  textChars: 10_000,
} as const;

/**
 * Body limit of the batch route: a full batch at the limits above must fit however the client encodes its
 * JSON — 6 bytes per content character covers `\uXXXX` escapes (Python's json.dumps default), metadata at its
 * cap, tags, and room for the keys. About 20 MB, against the global 1 MiB.
 */
export const BATCH_BODY_LIMIT =
  LIMITS.batch * (LIMITS.contentChars * 6 + LIMITS.metadataBytes + LIMITS.tags * LIMITS.tagChars * 6 + 1024) +
  64 * 1024;

const id = z.uuid();
// References given by callers: any string; one that names nothing (or is not a uuid) answers 404, not 400.
const ref = z.string().trim().min(1).max(100);
const metadata = z
  .record(z.string(), z.unknown())
  .refine((m) => JSON.stringify(m).length <= LIMITS.metadataBytes, {
    message: `must be at most ${LIMITS.metadataBytes} bytes of JSON`,
  });
// Stored and returned exactly as sent (whitespace and newlines included); only a blank one is refused.
const content = z
  .string()
  .min(1)
  .max(LIMITS.contentChars)
  .refine((c) => c.trim().length > 0, { message: 'must not be blank' });
const tags = z.array(z.string().trim().min(1).max(LIMITS.tagChars)).max(LIMITS.tags);
const confidence = z.number().min(0).max(1);
const memoryType = z.enum(MEMORY_TYPES);
const memoryTier = z.enum(MEMORY_TIERS);
const iso = z.string().describe('ISO 8601');
const datetime = z.iso.datetime({ offset: true });
/** `provider/model`, as the model proxy takes it. */
const modelRef = z.string().trim().min(1).max(200);
const limitQ = (def: number, max: number) => z.coerce.number().int().min(1).max(max).default(def);

export const pageOf = offsetPageSchema;

// Agents
export const agent = z.object({
  id,
  name: z.string(),
  description: z.string().nullable(),
  instructions: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  infer: z
    .boolean()
    .describe('Whether `memory.add` infers facts for this agent unless a call says otherwise.'),
  inferModel: z
    .string()
    .nullable()
    .describe('The model that infers for this agent; null: TEXT_MODEL, else the rules.'),
  createdAt: iso,
  updatedAt: iso,
});
export const createAgentBody = z.object({
  name: z.string().trim().min(1).max(LIMITS.nameChars),
  description: z.string().max(LIMITS.textChars).nullish(),
  instructions: z.string().max(LIMITS.textChars).nullish(),
  metadata: metadata.optional(),
  infer: z.boolean().optional(),
  inferModel: modelRef.nullish(),
});
export const updateAgentBody = createAgentBody.partial();
export const listQuery = offsetQuery({ defaultLimit: 20, maxLimit: LIMITS.pageMax });

// Memories
const memoryRef = z.object({ id, content: z.string() });
const lineage = z.object({
  source: z
    .object({
      index: z.number().int(),
      role: z.string(),
      id: z.string().optional(),
      at: iso.optional(),
      excerpt: z.string(),
    })
    .optional(),
  supersedes: z.array(memoryRef).optional(),
  supersededBy: memoryRef.optional(),
  model: z.string().optional(),
});
export const memory = z.object({
  id,
  content: z.string(),
  type: memoryType,
  tier: memoryTier,
  confidence: z.number(),
  accessCount: z.number().int(),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  agentId: id.nullable(),
  collectionId: id.nullable(),
  embeddingModel: z.string(),
  embeddingStatus: z.enum(['ready', 'pending']),
  createdAt: iso,
  updatedAt: iso,
  lastAccessedAt: iso.nullable(),
  eventAt: iso
    .nullable()
    .describe(
      'When what the memory says happened or began to hold (told, or found in the text); null: unknown.',
    ),
  eventPrecision: z
    .enum(EVENT_PRECISIONS)
    .nullable()
    .describe('The period `eventAt` starts: the instant, or its day, week, month or year.'),
  validUntil: iso.nullable().describe('When a superseded or deleted fact stopped holding.'),
  lineage: lineage.nullable().describe('Where an inferred memory came from and what it superseded.'),
});
export const recalledMemory = memory.extend({
  similarity: z
    .number()
    .describe(
      "Cosine similarity (0 to 1) of the query's and the memory's embeddings, whichever leg found it.",
    ),
  foundBy: z
    .enum(['vector', 'keyword', 'both'])
    .optional()
    .describe('Which leg of the recall found the memory: vector similarity, keyword rank (BM25) or both.'),
});

export const storeMemoryBody = z.object({
  content,
  agentId: ref.optional(),
  collectionId: ref.optional(),
  type: memoryType.default('semantic'),
  confidence: confidence.default(1),
  metadata: metadata.optional(),
  tags: tags.optional(),
  eventAt: datetime
    .optional()
    .describe('When what the memory says happened; else `metadata.eventAt`, else a time the text names.'),
  referenceTime: datetime
    .optional()
    .describe('When the content was said: "last month" in it is resolved against this time (default: now).'),
});
export const batchItem = storeMemoryBody.omit({ agentId: true });
export const batchBody = z.object({
  memories: z.array(batchItem).min(1).max(LIMITS.batch),
  agentId: ref.optional(),
});
export const batchReply = z.object({ created: z.number().int(), memories: z.array(memory) });

export const updateMemoryBody = z.object({
  content: content.optional(),
  type: memoryType.optional(),
  tier: memoryTier.optional(),
  confidence: confidence.optional(),
  metadata: metadata.optional(),
  tags: tags.optional(),
  agentId: ref.nullable().optional(),
  collectionId: ref.nullable().optional(),
});

export const listMemoriesQuery = listQuery.extend({
  agentId: ref.optional(),
  collectionId: ref.optional(),
  type: memoryType.optional(),
  tier: memoryTier.optional(),
});

const tierSelection = {
  tier: memoryTier.optional().describe('Only this tier.'),
  tiers: z.array(memoryTier).min(1).max(4).optional().describe('These tiers (default hot and warm).'),
};

export const recallBody = z.object({
  query: z.string().trim().min(1).max(LIMITS.contentChars),
  agentId: ref.optional(),
  collectionId: ref.optional(),
  type: memoryType.optional(),
  limit: z.number().int().min(1).max(LIMITS.recallMax).default(10),
  threshold: z.number().min(0).max(1).optional(),
  metadata: metadata.optional().describe('JSON containment filter (metadata @> filter).'),
  tags: z.array(z.string()).max(LIMITS.tags).optional().describe('Memories having all these tags.'),
  eventFrom: datetime
    .optional()
    .describe('Only memories whose event (`eventAt` and its period; else `createdAt`) ends after this time.'),
  eventTo: datetime.optional().describe('Only memories whose event starts before this time.'),
  timeBoost: z
    .boolean()
    .optional()
    .describe('hybrid: memories of the time the query names ("last month") rank higher (default true).'),
  referenceTime: datetime
    .optional()
    .describe('When the query is asked: "last month" in it resolves against this.'),
  mode: z
    .enum(['hybrid', 'vector', 'keyword'])
    .default('hybrid')
    .describe(
      'hybrid (default): vector similarity and keyword rank (BM25) fused; vector or keyword: one leg.',
    ),
  ...tierSelection,
});
export const recallReply = z.object({ memories: z.array(recalledMemory), total: z.number().int() });

export const searchQuery = z.object({
  q: z.string().trim().min(1).max(1000),
  agentId: ref.optional(),
  collectionId: ref.optional(),
  type: memoryType.optional(),
  tier: memoryTier.optional(),
  limit: limitQ(20, LIMITS.pageMax),
});
export const searchReply = z.object({
  memories: z.array(memory.extend({ rank: z.number() })),
  total: z.number().int(),
});

// Adding with inference (memory.add)
const chatMessage = z.object({
  role: z.enum(['user', 'assistant', 'system', 'tool']).default('user'),
  content,
  name: z.string().trim().min(1).max(LIMITS.nameChars).optional(),
  id: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe("The client's id of the message (kept in lineage)."),
  createdAt: datetime.optional().describe('When it was said; relative times in it resolve against this.'),
});
export const addMemoriesBody = z
  .object({
    agentId: ref,
    collectionId: ref.optional(),
    content: content.optional(),
    messages: z.array(chatMessage).min(1).max(LIMITS.batch).optional(),
    infer: z.boolean().optional().describe("Extract and reconcile facts (default: the agent's `infer`)."),
    model: modelRef
      .optional()
      .describe("The inferring model (default: the agent's, else TEXT_MODEL, else rules)."),
    type: memoryType.optional().describe('Without inference: the type of what is stored (default episodic).'),
    confidence: confidence.optional(),
    metadata: metadata.optional(),
    tags: tags.optional(),
    referenceTime: datetime
      .optional()
      .describe('When messages without `createdAt` were said (default: now).'),
  })
  .refine((b) => (b.content === undefined) !== (b.messages === undefined), {
    message: 'give either content or messages',
    path: ['messages'],
  });
export const addMemoriesReply = z.object({
  inferred: z.boolean(),
  model: z.string().nullable().describe('Who decided: a model, `pier-rules/v1`, or null without inference.'),
  created: z.number().int(),
  results: z.array(
    z.object({
      event: z.enum(INFER_DECISIONS),
      fact: z.string(),
      reason: z.string(),
      memory: memory.nullable(),
      previous: memoryRef
        .nullable()
        .describe('The memory superseded (UPDATE), deleted (DELETE) or matched (NONE).'),
    }),
  ),
});

export const deleteManyBody = z.object({ memoryIds: z.array(ref).min(1).max(LIMITS.deleteMany) });

export const historyEntry = z.object({
  content: z.string(),
  type: memoryType,
  tier: memoryTier,
  confidence: z.number(),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  event: z.enum(['updated', 'archived', 'compacted', 'added', 'superseded', 'deleted', 'confirmed']),
  validFrom: iso,
  validTo: iso,
  decision: z.enum(INFER_DECISIONS).nullable().describe("Inference's decision (memory.add), else null."),
  reason: z.string().nullable(),
  relatedMemoryId: id.nullable().describe('The superseding or superseded memory.'),
  model: z.string().nullable().describe('The model (or `pier-rules/v1`) that decided.'),
});
export const historyReply = z.object({
  memoryId: id,
  current: memory,
  items: z.array(historyEntry),
  total: z.number().int(),
});

// Collections
const compactionConfig = z.object({
  strategy: z.enum(['summarize']).default('summarize'),
  threshold: z.number().min(0).max(1).default(0.8),
  triggerCount: z.number().int().min(2).max(100_000).default(100),
});
export const collection = z.object({
  id,
  name: z.string(),
  description: z.string().nullable(),
  compactionEnabled: z.boolean(),
  compactionConfig: z.object({ strategy: z.string(), threshold: z.number(), triggerCount: z.number().int() }),
  memoryCount: z.number().int(),
  createdAt: iso,
  updatedAt: iso,
  lastCompactionAt: iso.nullable(),
});
export const createCollectionBody = z.object({
  name: z.string().trim().min(1).max(LIMITS.nameChars),
  description: z.string().max(LIMITS.textChars).nullish(),
  compactionEnabled: z.boolean().default(false),
  compactionConfig: compactionConfig.optional(),
});
export const updateCollectionBody = z.object({
  name: z.string().trim().min(1).max(LIMITS.nameChars).optional(),
  description: z.string().max(LIMITS.textChars).nullish(),
  compactionEnabled: z.boolean().optional(),
  compactionConfig: compactionConfig.partial().optional(),
});
export const deleteCollectionOptions = z.object({
  memories: z.enum(['keep', 'delete', 'reassign']).default('keep'),
  targetCollectionId: ref.optional(),
});
export const collectionStats = z.object({
  totalMemories: z.number().int(),
  byTier: z.record(memoryTier, z.number().int()),
  byType: z.record(memoryType, z.number().int()),
  storageBytes: z.number().int(),
  lastCompactionAt: iso.nullable(),
});
export const compactBody = z.object({ strategy: z.enum(['summarize']).optional() });
export const compactReply = z.object({
  jobId: id,
  status: z.enum(['pending', 'processing', 'completed', 'failed']),
  collectionId: id,
});
export const compactionJob = z.object({
  id,
  status: z.enum(['pending', 'processing', 'completed', 'failed']),
  collectionId: id,
  strategy: z.string(),
  trigger: z.enum(['manual', 'auto']),
  memoriesProcessed: z.number().int(),
  memoriesCreated: z.number().int(),
  memoriesArchived: z.number().int(),
  error: z.string().nullable(),
  createdAt: iso,
  startedAt: iso.nullable(),
  completedAt: iso.nullable(),
});

export const success = z.object({ success: z.boolean() });
export const idParam = <K extends string>(name: K) => z.object({ [name]: ref } as Record<K, typeof ref>);

export type StoreMemoryInput = z.infer<typeof storeMemoryBody>;
export type UpdateMemoryInput = z.infer<typeof updateMemoryBody>;
export type RecallInput = z.infer<typeof recallBody>;
export type AddMemoriesInput = z.infer<typeof addMemoriesBody>;
export type SearchInput = z.infer<typeof searchQuery>;
export type ListMemoriesInput = z.infer<typeof listMemoriesQuery>;
export type CreateAgentInput = z.infer<typeof createAgentBody>;
export type UpdateAgentInput = z.infer<typeof updateAgentBody>;
export type CreateCollectionInput = z.infer<typeof createCollectionBody>;
export type UpdateCollectionInput = z.infer<typeof updateCollectionBody>;
export type DeleteCollectionOptions = z.infer<typeof deleteCollectionOptions>;
