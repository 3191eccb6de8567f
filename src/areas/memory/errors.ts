import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of v1 memory: memories, agents, collections, compaction.

export const memoryCatalogue = defineCatalogue({
  AGENT_NOT_FOUND: { status: 404, message: 'Agent not found.' },
  MEMORY_NOT_FOUND: { status: 404, message: 'Memory not found.' },
  COLLECTION_NOT_FOUND: { status: 404, message: 'Collection not found.' },
  COMPACTION_JOB_NOT_FOUND: { status: 404, message: 'Compaction job not found.' },
  MEMORY_DUPLICATE: {
    status: 409,
    message: 'Another active memory of the same agent and collection already has this content.',
  },
  MEMORY_INFERENCE_FAILED: {
    status: 502,
    message: 'The inferring model did not answer with the facts or decisions asked for; nothing was stored.',
  },
  VECTOR_EXTENSION_MISSING: {
    status: 503,
    message:
      "Memory needs the PostgreSQL 'vector' extension (pgvector): install it on the database server and restart Pier, or run Pier on its embedded database (no DATABASE_URL).",
  },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof memoryCatalogue> {}
}

const error = memoryCatalogue.error;

export const memoryErrors = {
  vectorExtensionMissing: () => error('VECTOR_EXTENSION_MISSING'),
  agentNotFound: () => error('AGENT_NOT_FOUND'),
  memoryNotFound: () => error('MEMORY_NOT_FOUND'),
  collectionNotFound: () => error('COLLECTION_NOT_FOUND'),
  compactionJobNotFound: () => error('COMPACTION_JOB_NOT_FOUND'),
  memoryDuplicate: () => error('MEMORY_DUPLICATE'),
  inferenceFailed: (model: string) =>
    error(
      'MEMORY_INFERENCE_FAILED',
      `The model '${model}' did not answer with the JSON asked for; nothing was stored. Try again or name another model.`,
    ),
} as const;
