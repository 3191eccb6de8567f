import { z } from 'zod';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import { embedderView } from './embedders.ts';

// The organization's embedder: the one recall searches (active), the one EMBEDDING_MODEL names
// (configured) and, while the organization's vectors are rewritten for a new one, its progress.

export const getModelEmbedderForCli = defineFn({
  name: 'getModelEmbedderForCli',
  summary:
    "The organization's embedder: the active one (whose vectors recall searches), the configured one, and a pending re-embedding with its progress.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput }),
  output: z.object({
    configured: z.string(),
    active: z
      .object({ model: z.string(), dimension: z.number().int(), generation: z.number().int() })
      .nullable(),
    pending: z
      .object({
        model: z.string(),
        progress: z.object({ done: z.number().int(), total: z.number().int() }),
        startedAt: z.string().nullable(),
        error: z.string().nullable(),
      })
      .nullable(),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug }) => {
    const { org } = await orgForUser(deps, caller.userId, orgSlug);
    return embedderView(deps, org.id);
  },
});
