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
  // Spend limits (docs/decisions/101-model-budgets.md): 402 as OpenRouter answers a spent credit limit,
  // distinct from 429, which clients retry.
  BUDGET_EXCEEDED: { status: 402, message: 'The monthly model budget is spent.' },
  MODEL_NOT_ALLOWED: { status: 403, message: 'This API key may not use this model (its allow-list).' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof modelsCatalogue> {}
}

const error = modelsCatalogue.error;

const usd = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`;

export const modelsErrors = {
  budgetExceeded: (scope: 'API key' | 'organization', budget: number, spent: number, estimate: number) =>
    error(
      'BUDGET_EXCEEDED',
      estimate > 0 && spent < budget
        ? `This call could cost up to ${usd(estimate)} (max_tokens) and the ${scope}'s monthly model budget of ${usd(budget)} has ${usd(budget - spent)} left; lower max_tokens or raise the budget.`
        : `The ${scope}'s monthly model budget of ${usd(budget)} is spent (${usd(spent)} this month, UTC); it resets on the 1st, or raise it.`,
    ),
  modelNotAllowed: (model: string) =>
    error(
      'MODEL_NOT_ALLOWED',
      `This API key may not use '${model.slice(0, 200)}': it is not in the key's model allow-list.`,
    ),
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
