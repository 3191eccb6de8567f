import type http from 'node:http';
import { embedLocal } from '../../src/core/ai/local-embedder.ts';
import {
  type FakeServer,
  json,
  type Recorded,
  replyText,
  sample,
  sse,
  startFake,
  toolAnswer,
  toolCalls,
  words,
} from './fake-server.ts';

// OpenAI's wire format: POST /v1/chat/completions (JSON or SSE with stream: true) and POST /v1/embeddings.
// Also serves as the `pier` endpoint (an OpenAI-compatible server such as Ollama or vLLM) and, with
// vendor 'mistral', as Mistral's API, which uses the same shapes.

type Msg = {
  role: string;
  content: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string }[];
  tool_call_id?: string;
};
const textOf = (c: Msg['content']) =>
  typeof c === 'string' ? c : (c ?? []).map((p) => p.text ?? '').join('');

export const EMBED_DIM = 8;

type Schema = Parameters<typeof sample>[0];
type Tool = { function: { name: string; parameters?: Schema } };

/** What GET /models lists per vendor. */
export const MODEL_LISTS: Record<string, string[]> = {
  openai: ['gpt-4o-mini', 'text-embedding-3-small', 'dall-e-3', 'tts-1'],
  mistral: ['mistral-small-latest'],
  pier: ['llama3.2', 'nomic-embed-text'],
};

/** `embedDim`: the size of the deterministic vectors /embeddings answers (the local embedder's hashing). */
export type OpenAIFakeOptions = { embedDim?: number };

export function openaiHandler(vendor: string, prefix = '/v1', opts: OpenAIFakeOptions = {}) {
  return (req: Recorded, res: http.ServerResponse) => {
    const body = req.body as Record<string, unknown>;
    if (req.method === 'POST' && req.path === `${prefix}/chat/completions`) {
      // A model named '…unavailable…' always fails, as an overloaded provider does (fallback tests).
      if (String(body.model).includes('unavailable')) {
        json(res, 503, { error: { message: 'The model is overloaded.', type: 'server_error' } });
        return;
      }
      const messages = body.messages as Msg[];
      const refusal = refuse(vendor, String(body.model), messages);
      if (refusal) {
        json(res, 400, refusal);
        return;
      }
      const tools = (body.tools as Tool[] | undefined) ?? [];
      if (tools.length && messages.at(-1)?.role !== 'tool') {
        const calls = toolCalls(
          tools.map((t) => ({ name: t.function.name, schema: t.function.parameters })),
          textOf(messages.at(-1)?.content ?? ''),
          body.parallel_tool_calls !== false,
        );
        answerToolCalls(res, body, calls, vendor === 'mistral');
        return;
      }
      const prompt = messages.map((m) => textOf(m.content)).join(' ');
      const last = textOf([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
      // Structured output: answer with an object of the requested JSON schema, filled with sample values.
      const format = body.response_format as { type?: string; json_schema?: { schema?: Schema } } | undefined;
      const text =
        messages.at(-1)?.role === 'tool'
          ? toolAnswer(vendor, textOf(messages.at(-1)!.content))
          : format?.type === 'json_schema'
            ? JSON.stringify(sample(format.json_schema?.schema ?? {}, last))
            : format?.type === 'json_object'
              ? JSON.stringify({ echo: last })
              : replyText(vendor, last);
      const usage = {
        prompt_tokens: words(prompt).length,
        completion_tokens: words(text).length,
        total_tokens: words(prompt).length + words(text).length,
      };
      const base = { id: 'cmpl-fake', created: 1_700_000_000, model: body.model };
      if (!body.stream) {
        json(res, 200, {
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage,
        });
        return;
      }
      const chunk = (delta: unknown, finish: string | null, extra = {}) =>
        JSON.stringify({
          ...base,
          object: 'chat.completion.chunk',
          choices: [{ index: 0, delta, finish_reason: finish }],
          ...extra,
        });
      const parts = text.split(/(?<= )/);
      if (String(body.model).includes('broken-stream')) {
        // A failure after the first tokens, as OpenAI reports it inside an open stream.
        sse(res, [
          chunk({ role: 'assistant', content: parts[0] }, null),
          JSON.stringify({
            error: {
              message: 'The server had an error while processing your request.',
              type: 'server_error',
            },
          }),
        ]);
        return;
      }
      sse(res, [
        chunk({ role: 'assistant', content: '' }, null),
        ...parts.map((p) => chunk({ content: p }, null)),
        // OpenAI sends usage in an extra chunk with no choices; Mistral puts it on the finishing chunk.
        ...(vendor === 'mistral'
          ? [chunk({}, 'stop', { usage })]
          : [
              chunk({}, 'stop'),
              JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage }),
            ]),
        '[DONE]',
      ]);
      return;
    }
    if (req.method === 'POST' && req.path === `${prefix}/embeddings`) {
      const input = body.input as string | string[];
      const texts = typeof input === 'string' ? [input] : input;
      const tokens = texts.reduce((n, t) => n + words(t).length, 0);
      json(res, 200, {
        object: 'list',
        model: body.model,
        data: texts.map((t, index) => ({
          object: 'embedding',
          index,
          embedding: Array.from(embedLocal(t, opts.embedDim ?? EMBED_DIM)),
        })),
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
      return;
    }
    if (req.method === 'POST' && req.path === `${prefix}/images/generations`) {
      // A 1×1 PNG per requested image.
      const png =
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
      const n = Number(body.n ?? 1);
      json(res, 200, { created: 1_700_000_000, data: Array.from({ length: n }, () => ({ b64_json: png })) });
      return;
    }
    if (req.method === 'POST' && req.path === `${prefix}/audio/speech`) {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.end(Buffer.from(`ID3fake-mp3:${String(body.input)}`));
      return;
    }
    if (req.method === 'GET' && req.path === `${prefix}/models`) {
      // An organization's own key (one with `-org-` in it) also sees its fine-tuned model.
      const own = String(req.headers.authorization ?? '').includes('-org-');
      const ids = [...(MODEL_LISTS[vendor] ?? [`${vendor}-model`]), ...(own ? [`ft:${vendor}-own`] : [])];
      json(res, 200, {
        object: 'list',
        data: ids.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: vendor })),
      });
      return;
    }
    json(res, 404, {
      error: { message: `no route ${req.method} ${req.path}`, type: 'invalid_request_error' },
    });
  };
}

/** What the vendor refuses as its API does: Mistral's tool call ids, images sent to a text-only model. */
function refuse(vendor: string, model: string, messages: Msg[]): unknown {
  if (vendor === 'mistral') {
    // Mistral takes only its own shape of tool call id (nine letters or digits), in calls and in results.
    const ids = messages.flatMap((m) => [...(m.tool_calls ?? []).map((c) => c.id), m.tool_call_id ?? '']);
    const bad = ids.find((id) => id !== '' && !/^[a-zA-Z0-9]{9}$/.test(id));
    if (bad !== undefined)
      return {
        object: 'error',
        message: `Tool call id was ${bad} but must be a-z, A-Z, 0-9, with a length of 9.`,
        type: 'invalid_request_message_order',
        param: null,
        code: '3280',
      };
  }
  const image = messages.some(
    (m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url'),
  );
  if (model.includes('text-only') && image)
    return {
      error: {
        message: 'Invalid content type. image_url is only supported by certain models.',
        type: 'invalid_request_error',
        param: 'messages.[0].content.[1].type',
        code: null,
      },
    };
  return undefined;
}

export function startOpenAIServer(vendor = 'openai', opts: OpenAIFakeOptions = {}): Promise<FakeServer> {
  return startFake(openaiHandler(vendor, '/v1', opts));
}

/** The model's tool calls, whole or streamed as OpenAI does: id and name first, the arguments in pieces. */
function answerToolCalls(
  res: http.ServerResponse,
  body: Record<string, unknown>,
  calls: { id: string; name: string; input: unknown }[],
  whole = false,
): void {
  const base = { id: 'cmpl-fake', created: 1_700_000_000, model: body.model };
  const usage = { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 };
  const wire = calls.map((c) => ({
    // Mistral's ids are nine letters or digits; OpenAI's start with call_.
    id: whole ? c.id.replace(/[^a-zA-Z0-9]/g, '').slice(-9) : c.id,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.input) },
  }));
  if (!body.stream) {
    json(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: wire },
          finish_reason: 'tool_calls',
        },
      ],
      usage,
    });
    return;
  }
  const chunk = (delta: unknown, finish: string | null, extra = {}) =>
    JSON.stringify({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    });
  // Mistral streams each call whole in one delta; OpenAI its id and name first, then argument pieces.
  const pieces = wire.flatMap((w, index) => {
    if (whole) return [chunk({ tool_calls: [{ index, ...w }] }, null)];
    const a = w.function.arguments;
    const half = Math.ceil(a.length / 2);
    return [
      chunk(
        {
          tool_calls: [
            { index, id: w.id, type: 'function', function: { name: w.function.name, arguments: '' } },
          ],
        },
        null,
      ),
      chunk({ tool_calls: [{ index, function: { arguments: a.slice(0, half) } }] }, null),
      chunk({ tool_calls: [{ index, function: { arguments: a.slice(half) } }] }, null),
    ];
  });
  sse(res, [
    chunk({ role: 'assistant', content: null }, null),
    ...pieces,
    // Mistral puts usage on the finishing chunk, OpenAI in an extra chunk without choices.
    ...(whole
      ? [chunk({}, 'tool_calls', { usage })]
      : [
          chunk({}, 'tool_calls'),
          JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage }),
        ]),
    '[DONE]',
  ]);
}
