import { embedLocal } from '../../src/core/ai/local-embedder.ts';
import {
  type FakeServer,
  json,
  replyText,
  sample,
  sse,
  startFake,
  toolAnswer,
  toolCalls,
  words,
} from './fake-server.ts';
import { EMBED_DIM } from './openai-server.ts';

// Google's Gemini API (v1beta): models/{m}:generateContent, :streamGenerateContent?alt=sse,
// :batchEmbedContents and :embedContent, authenticated with x-goog-api-key.

type Part = { text?: string; functionResponse?: { name: string; response: { content?: unknown } } };
type Content = { role?: string; parts: Part[] };
const textOf = (c: Content) => c.parts.map((p) => p.text ?? '').join('');
type Schema = Parameters<typeof sample>[0];
type Declaration = { name: string; parameters?: Schema; parametersJsonSchema?: Schema };

export function startGoogleServer(): Promise<FakeServer> {
  return startFake((req, res) => {
    if (req.method === 'GET' && req.path.startsWith('/v1beta/models') && req.headers['x-goog-api-key']) {
      json(res, 200, {
        models: [{ name: 'models/gemini-2.5-flash', supportedGenerationMethods: ['generateContent'] }],
      });
      return;
    }
    const m = /^\/v1beta\/models\/([^:]+):(\w+)(\?.*)?$/.exec(req.path);
    if (req.method !== 'POST' || !m) {
      json(res, 404, { error: { code: 404, message: 'Not found', status: 'NOT_FOUND' } });
      return;
    }
    if (!req.headers['x-goog-api-key']) {
      json(res, 403, { error: { code: 403, message: 'API key missing', status: 'PERMISSION_DENIED' } });
      return;
    }
    const [, model, method] = m;
    const body = req.body as Record<string, unknown>;
    // Failing models, in Google's own error shapes (fallback tests): '…unavailable…' is overloaded (503
    // UNAVAILABLE), '…ratelimited…' out of quota (429 RESOURCE_EXHAUSTED).
    if (model!.includes('unavailable')) {
      const error = {
        code: 503,
        message: 'The model is overloaded. Please try again later.',
        status: 'UNAVAILABLE',
      };
      json(res, 503, { error });
      return;
    }
    if (model!.includes('ratelimited')) {
      json(res, 429, {
        error: { code: 429, message: 'Resource has been exhausted.', status: 'RESOURCE_EXHAUSTED' },
      });
      return;
    }
    if (method === 'generateContent' || method === 'streamGenerateContent') {
      const contents = body.contents as Content[];
      const last = textOf([...contents].reverse().find((c) => c.role === 'user') ?? { parts: [] });
      const answered = contents.at(-1)?.parts.find((p) => p.functionResponse)?.functionResponse;
      const declared = ((body.tools ?? []) as { functionDeclarations?: Declaration[] }[]).flatMap(
        (t) => t.functionDeclarations ?? [],
      );
      if (declared.length && !answered) {
        // Gemini sends each call whole, as a functionCall part (no argument pieces), also when streaming.
        const calls = toolCalls(
          declared.map((d) => ({ name: d.name, schema: d.parameters ?? d.parametersJsonSchema })),
          last,
        );
        const candidate = {
          content: {
            role: 'model',
            parts: calls.map((c) => ({ functionCall: { name: c.name, args: c.input } })),
          },
          finishReason: 'STOP',
          index: 0,
        };
        const usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 7, totalTokenCount: 12 };
        const answer = { candidates: [candidate], usageMetadata, modelVersion: model };
        if (method === 'generateContent') json(res, 200, answer);
        else sse(res, [{ data: answer }]);
        return;
      }
      const jsonSchema = (body.generationConfig as { responseJsonSchema?: Schema } | undefined)
        ?.responseJsonSchema;
      const text = answered
        ? toolAnswer('google', String(answered.response.content ?? JSON.stringify(answered.response)))
        : jsonSchema
          ? JSON.stringify(sample(jsonSchema, last))
          : replyText('google', last);
      const prompt = words(contents.map(textOf).join(' ')).length;
      const usageMetadata = {
        promptTokenCount: prompt,
        candidatesTokenCount: words(text).length,
        totalTokenCount: prompt + words(text).length,
      };
      if (method === 'generateContent') {
        json(res, 200, {
          candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
          usageMetadata,
          modelVersion: model,
        });
        return;
      }
      const parts = text.split(/(?<= )/);
      sse(
        res,
        parts.map((t, i) => ({
          data: {
            candidates: [
              {
                content: { role: 'model', parts: [{ text: t }] },
                index: 0,
                ...(i === parts.length - 1 ? { finishReason: 'STOP' } : {}),
              },
            ],
            ...(i === parts.length - 1 ? { usageMetadata } : {}),
            modelVersion: model,
          },
        })),
      );
      return;
    }
    if (method === 'batchEmbedContents') {
      const requests = body.requests as { content: Content }[];
      json(res, 200, {
        embeddings: requests.map((r) => ({ values: Array.from(embedLocal(textOf(r.content), EMBED_DIM)) })),
      });
      return;
    }
    if (method === 'embedContent') {
      json(res, 200, {
        embedding: { values: Array.from(embedLocal(textOf(body.content as Content), EMBED_DIM)) },
      });
      return;
    }
    json(res, 404, { error: { code: 404, message: `unknown method ${method}`, status: 'NOT_FOUND' } });
  });
}
