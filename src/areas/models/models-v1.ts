import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { PROVIDERS, type ProviderId, parseModelRef, type ResolvedModel } from '../../core/ai/providers.ts';
import { apiKeyCaller, operationDoc } from '../../http/v1-kit.ts';
import { allowedModelsOf, modelAllowed } from './budgets.ts';
import { modelsErrors } from './errors.ts';
import { fetchList, type Upstream } from './model-lists.ts';
import type { ProxyContext } from './proxy-context.ts';

// GET /v1/ai/models: what the calling organization can use now, in OpenAI's shape. Which providers it can
// use is resolveModel's answer (the organization's key, else the platform's, `pier` when configured); the
// models are what each such provider lists for that key, so an organization's fine-tunes show up for it
// alone and a model the vendor retired disappears without a table here to maintain. A key with an allow-list
// sees only the models it may call.

const LIST_TTL_MS = 60_000;

export const modelSchema = z
  .object({
    id: z.string().describe('`provider/model`, as accepted by chat completions and embeddings'),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.string().describe('The provider that serves it'),
  })
  .describe('A model (OpenAI format)');
const listSchema = z
  .object({ object: z.literal('list'), data: z.array(modelSchema) })
  .describe('The models the organization can use now (OpenAI format)');
type Model = z.infer<typeof modelSchema>;

export async function modelsListRoutes(app: FastifyInstance, ctx: ProxyContext): Promise<void> {
  const { deps } = ctx;
  // Per provider, base URL and key (hashed): organizations sharing the platform's key share its list.
  const cache = new Map<string, { at: number; value: Promise<Upstream[]> }>();
  const listFor = (r: ResolvedModel) => {
    const k = [r.provider, r.baseUrl, crypto.createHash('sha256').update(r.apiKey).digest('hex')].join('\0');
    const now = Date.now();
    const hit = cache.get(k);
    if (hit && now - hit.at < LIST_TTL_MS) return hit.value;
    if (cache.size > 10_000) cache.clear();
    const value = fetchList(r);
    cache.set(k, { at: now, value });
    value.catch(() => cache.delete(k));
    return value;
  };

  const modelsOf = async (orgId: string, keyId: string, asked?: string): Promise<Model[]> => {
    const [all, allowed] = await Promise.all([orgModels(orgId), allowedModelsOf(deps, orgId, keyId)]);
    return allowed ? all.filter((m) => modelAllowed(allowed, m.id, asked ?? m.id)) : all;
  };

  const orgModels = async (orgId: string): Promise<Model[]> => {
    const lists = await Promise.all(
      PROVIDERS.map(async (provider: ProviderId) => {
        // Resolving `<provider>/models` asks resolveModel which key (if any) serves that provider for the
        // organization — the same decision, audit included, as for a completion.
        const r = await ctx.resolve(orgId, `${provider}/models`).catch(() => null);
        if (!r) return [];
        try {
          const upstream = await listFor(r);
          return upstream.map((m) => ({
            id: `${provider}/${m.id}`,
            object: 'model' as const,
            created: Number.isFinite(m.created) ? Math.trunc(m.created!) : 0,
            owned_by: provider,
          }));
        } catch (err) {
          // One provider down must not hide the others' models.
          deps.log.warn({ err, provider }, 'model list unavailable from provider');
          return [];
        }
      }),
    );
    return lists.flat();
  };

  const listDoc = operationDoc('ai', {
    name: 'ai.listModels',
    summary:
      'Lists the models the organization can use now (OpenAI-compatible): per provider it has a key for, what that provider lists; for a key with an allow-list, those it allows.',
    errors: [],
  });
  const { errorResponses: listErrors, ...listRest } = listDoc;
  app.get(
    '/models',
    { schema: { ...listRest, response: { 200: listSchema, ...listErrors } } },
    async (req) => {
      const caller = apiKeyCaller(req);
      return { object: 'list', data: await modelsOf(caller.orgId, caller.keyId) };
    },
  );

  const oneDoc = operationDoc('ai', {
    name: 'ai.retrieveModel',
    summary:
      'One model the organization can use now (OpenAI-compatible); `provider/model` (URL-encoded) or a bare name.',
    errors: ['MODEL_NOT_FOUND'],
  });
  const { errorResponses: oneErrors, ...oneRest } = oneDoc;
  const params = z.object({ id: z.string().min(1).max(200) });
  app.get(
    '/models/:id',
    { schema: { ...oneRest, params, response: { 200: modelSchema, ...oneErrors } } },
    async (req) => {
      const caller = apiKeyCaller(req);
      const { id } = req.params as z.infer<typeof params>;
      // A bare name means what it means in a completion: the provider its family (or `pier`) gives.
      let ref: string | null = null;
      try {
        const parsed = parseModelRef(id, Boolean(deps.config.models.pier));
        if (parsed) ref = `${parsed.provider}/${parsed.model}`;
      } catch {}
      const models = await modelsOf(caller.orgId, caller.keyId, id);
      const found = models.find((m) => m.id === id || m.id === ref);
      if (!found) throw modelsErrors.modelNotFound(id);
      return found;
    },
  );
}
