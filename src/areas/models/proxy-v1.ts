import type { FastifyInstance } from 'fastify';
import type { ResolvedModel } from '../../core/ai/providers.ts';
import type { Deps } from '../../deps.ts';
import { checkCall } from './budgets.ts';
import { chatCompletionsRoute } from './chat-completions.ts';
import { embeddingsRoute } from './embeddings-v1.ts';
import { UsageBuffer } from './model-usage.ts';
import { modelsListRoutes } from './models-v1.ts';
import { PriceList } from './prices.ts';
import type { ProxyContext } from './proxy-context.ts';
import { ProxyCredential, resolveThroughApi } from './proxy-credential.ts';
import { responsesRoute } from './responses-v1.ts';
import { keySpendRoute } from './spend-v1.ts';

const RESOLVE_TTL_MS = 10_000;

/**
 * The model proxy (role `proxy`), registered by the v1 plugin at /v1/ai, whose hooks check the API key, take
 * from the key's rate-limit bucket and handle Idempotency-Key: OpenAI-compatible chat completions,
 * embeddings and the model list for apps holding a v1 API key. Each request is resolved through resolveModel with the proxy's own
 * `model.resolve` credential and forwarded to the provider; token usage is recorded per organization.
 */
export async function modelProxyRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  const cred = new ProxyCredential(deps);
  const root = app;
  // Answers are kept for RESOLVE_TTL_MS per (organization, model): resolveModel (and its audit event) runs
  // once per pair and period instead of on every request, and a key change reaches the proxy within it.
  const cache = new Map<string, { at: number; value: Promise<ResolvedModel> }>();
  const prices = new PriceList(deps.config.models.prices);
  const usage = new UsageBuffer(deps, prices);
  app.addHook('onClose', async () => usage.flush());
  const ctx: ProxyContext = {
    deps,
    usage,
    guard: (c) => checkCall(deps, usage, prices, c),
    resolve: (orgId, model) => {
      const k = `${orgId}\u0000${model}`;
      const now = Date.now();
      const hit = cache.get(k);
      if (hit && now - hit.at < RESOLVE_TTL_MS) return hit.value;
      if (cache.size > 10_000) cache.clear();
      const value = resolveThroughApi(root, cred, orgId, model);
      cache.set(k, { at: now, value });
      value.catch(() => cache.delete(k)); // refusals are not cached
      return value;
    },
  };
  await chatCompletionsRoute(app, ctx);
  await responsesRoute(app, ctx);
  await embeddingsRoute(app, ctx);
  await modelsListRoutes(app, ctx);
  await keySpendRoute(app, ctx);
}
