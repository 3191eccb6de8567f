import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of per-organization embedders. The providers' own codes are in src/core/ai/errors.ts.

export const modelsCatalogue = defineCatalogue({
  EMBEDDER_DIMENSION_MISMATCH: {
    status: 409,
    message: 'This installation stores vectors of another dimension. Re-embed to switch.',
  },
  EMBEDDING_MODEL_UNAVAILABLE: {
    status: 503,
    message: 'The embedding model (EMBEDDING_MODEL) cannot be used.',
  },
  MODEL_NOT_FOUND: { status: 404, message: 'The organization has no such model in its list.' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof modelsCatalogue> {}
}

const error = modelsCatalogue.error;

export const modelsErrors = {
  modelNotFound: (id: string) =>
    error(
      'MODEL_NOT_FOUND',
      `'${id.slice(0, 200)}' is not among the models this organization can use now (GET /v1/ai/models lists them).`,
    ),
  embeddingModelUnavailable: (model: string, why: 'no provider key' | 'no embeddings' | 'key refused') =>
    error(
      'EMBEDDING_MODEL_UNAVAILABLE',
      why === 'no embeddings'
        ? `The embedding model '${model}' (EMBEDDING_MODEL) is served by a provider without embeddings: set EMBEDDING_MODEL to an embedding model, or unset it to use the built-in embedder.`
        : why === 'key refused'
          ? `The provider of the embedding model '${model}' (EMBEDDING_MODEL) refused its key: replace the organization's key (setModelProviderKeyForCli) or the platform's key, or unset EMBEDDING_MODEL to use the built-in embedder.`
          : `The embedding model '${model}' (EMBEDDING_MODEL) has no provider key: store the organization's key (setModelProviderKeyForCli), set the platform's key (e.g. OPENAI_API_KEY, or PIER_MODELS_URL for pier/ models), or unset EMBEDDING_MODEL to use the built-in embedder.`,
    ),
  embedderDimensionMismatch: (recorded: number, given: number, model: string) =>
    error(
      'EMBEDDER_DIMENSION_MISMATCH',
      `This installation stores ${recorded}-dimension vectors; '${model}' makes ${given}. Re-embed to switch.`,
    ),
} as const;
