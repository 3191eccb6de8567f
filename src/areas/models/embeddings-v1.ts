import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseLocalEmbedderId } from '../../core/ai/local-embedder.ts';
import { apiKeyCaller, operationDoc } from '../../http/v1-kit.ts';
import { PROXY_ERRORS, type ProxyContext } from './proxy-context.ts';

// OpenAI's embeddings wire format. `encoding_format: base64` (the official client's default) is
// little-endian float32, as OpenAI sends it. `pier-local/hash-<dim>-v1` is served by the built-in embedder.

export const embeddingsBody = z.object({
  model: z.string().min(1).max(200),
  input: z.union([z.string(), z.array(z.string()).min(1).max(2048)]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().positive().optional(),
  user: z.string().optional(),
});
type EmbeddingsBody = z.infer<typeof embeddingsBody>;

export const embeddingsSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        object: z.literal('embedding'),
        index: z.number().int(),
        embedding: z
          .union([z.array(z.number()), z.string()])
          .describe('Floats, or with `encoding_format: base64` little-endian float32 in base64'),
      }),
    ),
    model: z.string(),
    usage: z.object({ prompt_tokens: z.number(), total_tokens: z.number() }),
  })
  .describe('Embeddings (OpenAI format)');

function toBase64(v: number[]): string {
  return Buffer.from(new Float32Array(v).buffer).toString('base64');
}

export async function embeddingsRoute(app: FastifyInstance, ctx: ProxyContext): Promise<void> {
  const { deps } = ctx;
  const { errorResponses, ...doc } = operationDoc('ai', {
    name: 'ai.embeddings',
    summary: 'Creates embeddings (OpenAI-compatible).',
    errors: PROXY_ERRORS,
    errorStatuses: [502, 503],
  });
  const schema = { ...doc, body: embeddingsBody, response: { 200: embeddingsSchema, ...errorResponses } };
  app.post('/embeddings', { schema }, async (req) => {
    const caller = apiKeyCaller(req);
    const body = req.body as EmbeddingsBody;
    const texts = typeof body.input === 'string' ? [body.input] : body.input;
    const { orgId, keyId } = caller;
    const local = parseLocalEmbedderId(body.model);
    const resolved = local ? undefined : await ctx.resolve(orgId, body.model);
    const model = resolved ? `${resolved.provider}/${resolved.model}` : body.model;
    const inputChars = texts.reduce((n, s) => n + s.length, 0);
    await ctx.guard({ orgId, keyId, model, requested: body.model, inputChars });
    const res = await deps.models.embed(texts, resolved ? { resolved } : { model: body.model });
    // Buffered and written off the response path.
    ctx.usage.add({
      orgId,
      keyId,
      environment: caller.environment,
      model: res.model,
      usage: { promptTokens: res.usage.tokens, completionTokens: 0, totalTokens: res.usage.tokens },
    });
    return {
      object: 'list',
      data: res.vectors.map((v, index) => ({
        object: 'embedding',
        index,
        embedding: body.encoding_format === 'base64' ? toBase64(v) : v,
      })),
      model: body.model,
      usage: { prompt_tokens: res.usage.tokens, total_tokens: res.usage.tokens },
    };
  });
}
