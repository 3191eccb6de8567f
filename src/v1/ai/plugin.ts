import type { FastifyInstance } from 'fastify';
import type { Caller } from '../../core/auth/caller.ts';
import { resolveCaller } from '../../core/auth/resolve.ts';
import { errors } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import { chatCompletionsRoute } from './chat-completions.ts';
import { embeddingsRoute } from './embeddings.ts';
import { ProxyCredential, resolveThroughApi } from './proxy-credential.ts';

export type ApiKeyCaller = Extract<Caller, { kind: 'apikey' }>;

export type ProxyContext = {
  deps: Deps;
  resolve: (orgId: string, model: string) => ReturnType<typeof resolveThroughApi>;
};

/**
 * The model proxy (role `proxy`), registered at /v1/ai: OpenAI-compatible chat completions and embeddings
 * for apps holding a v1 API key. Each request is resolved through resolveModel with the proxy's own
 * `model.resolve` credential and forwarded to the provider; token usage is recorded per organization.
 */
export async function modelProxyRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  const cred = new ProxyCredential(deps);
  const root = app;
  const ctx: ProxyContext = {
    deps,
    resolve: (orgId, model) => resolveThroughApi(root, cred, orgId, model),
  };
  app.addHook('onRequest', async (req) => {
    req.caller = await resolveCaller(req, deps.credentials);
    if (!req.caller) throw errors.authRequired('Send a v1 API key as the bearer credential.');
    if (req.caller.kind !== 'apikey') throw errors.forbidden('The model proxy needs a v1 API key.');
  });
  await chatCompletionsRoute(app, ctx);
  await embeddingsRoute(app, ctx);
}
