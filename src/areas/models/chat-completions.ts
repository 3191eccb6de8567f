import crypto from 'node:crypto';
import type { JSONSchema7, ModelMessage } from 'ai';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { StreamEvent, Usage } from '../../core/ai/models.ts';
import type { ResolvedModel, ResponseFormat } from '../../core/ai/providers.ts';
import { ApiError, errorBody, errors } from '../../core/errors.ts';
import { apiKeyCaller, operationDoc } from '../../http/v1-kit.ts';
import { PROXY_ERRORS, type ProxyContext } from './proxy-context.ts';

// OpenAI's chat completions wire format in and out, whatever vendor serves the model.

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.union([z.string(), z.array(textPart), z.null()]).optional(),
  name: z.string().optional(),
});

export const chatBody = z.object({
  model: z.string().min(1).max(200),
  messages: z.array(message).min(1).max(1000),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  n: z.literal(1).nullish(),
  response_format: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('text') }),
      z.object({ type: z.literal('json_object') }),
      z.object({
        type: z.literal('json_schema'),
        json_schema: z.object({
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64'),
          description: z.string().max(10_000).optional(),
          schema: z.record(z.string(), z.unknown()).describe('A JSON schema'),
          strict: z.boolean().nullish(),
        }),
      }),
    ])
    .nullish()
    .describe(
      'JSON output. Passed to the provider (natively, or through the AI SDK for Anthropic and Google); ' +
        'where the provider cannot honour it, 400 MODEL_CAPABILITY_UNSUPPORTED — never ignored.',
    ),
  tools: z.array(z.unknown()).max(0, 'tools are not supported by the model proxy yet').optional(),
  user: z.string().optional(),
});
type ChatBody = z.infer<typeof chatBody>;

export const usageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

export const chatCompletionSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }),
        logprobs: z.null(),
        finish_reason: z.enum(['stop', 'length', 'content_filter', 'tool_calls']),
      }),
    ),
    usage: usageSchema,
  })
  .describe('A chat completion (OpenAI format)');

const sseSchema = z
  .string()
  .describe(
    'With `stream: true`: server-sent events, each `data: <chat.completion.chunk JSON>`; the last is ' +
      '`data: [DONE]`, or `data: {"error":{"code","message"}}` if the provider fails mid-stream.',
  );

const textOf = (c: ChatBody['messages'][number]['content']) =>
  typeof c === 'string' ? c : (c ?? []).map((p) => p.text).join('');

function toModelMessages(messages: ChatBody['messages']): { system?: string; messages: ModelMessage[] } {
  const system: string[] = [];
  const out: ModelMessage[] = [];
  for (const m of messages) {
    const text = textOf(m.content);
    if (m.role === 'system' || m.role === 'developer') system.push(text);
    else out.push({ role: m.role, content: text });
  }
  if (out.length === 0)
    throw errors.validation('messages: at least one user or assistant message is needed.');
  return { system: system.length ? system.join('\n\n') : undefined, messages: out };
}

const FINISH: Record<string, string> = {
  stop: 'stop',
  length: 'length',
  'content-filter': 'content_filter',
  'tool-calls': 'tool_calls',
};
const finishReason = (r: string) => FINISH[r] ?? 'stop';
const usageBody = (u: Usage) => ({
  prompt_tokens: u.promptTokens,
  completion_tokens: u.completionTokens,
  total_tokens: u.totalTokens,
});

/** The operation's OpenAPI side: written by hand since the route answers JSON or an event stream. */
function chatRouteSchema() {
  const { errorResponses, ...doc } = operationDoc('ai', {
    name: 'ai.chatCompletions',
    summary:
      'Creates a chat completion (OpenAI-compatible), streamed as server-sent events with `stream: true`.',
    description:
      'Idempotency-Key is honoured without `stream`; with `stream: true` it is refused (400 IDEMPOTENCY_STREAM_UNSUPPORTED).',
    errors: [...PROXY_ERRORS, 'IDEMPOTENCY_STREAM_UNSUPPORTED'],
    errorStatuses: [502, 503],
  });
  return {
    ...doc,
    body: chatBody,
    response: {
      200: {
        description: 'The completion, or with `stream: true` its chunks as server-sent events.',
        content: {
          'application/json': { schema: chatCompletionSchema },
          'text/event-stream': { schema: sseSchema },
        },
      },
      ...errorResponses,
    },
  };
}

function toTextRequest(body: ChatBody, resolved: ResolvedModel) {
  const { system, messages } = toModelMessages(body.messages);
  return {
    resolved,
    system,
    messages,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    stopSequences: body.stop == null ? undefined : Array.isArray(body.stop) ? body.stop : [body.stop],
    responseFormat: responseFormatOf(body.response_format),
  };
}

function responseFormatOf(f: ChatBody['response_format']): ResponseFormat | undefined {
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  const { name, description, schema, strict } = f.json_schema;
  return {
    type: 'json_schema',
    name,
    description,
    schema: schema as JSONSchema7,
    strict: strict ?? undefined,
  };
}

/** What one completion's answers share: its id, creation time, the model named by the client, usage. */
type Completion = { id: string; created: number; body: ChatBody; record: (usage: Usage) => void };

export async function chatCompletionsRoute(app: FastifyInstance, ctx: ProxyContext): Promise<void> {
  const { deps } = ctx;
  const config = { v1Streams: (b: unknown) => (b as ChatBody).stream === true };
  app.post('/chat/completions', { schema: chatRouteSchema(), config }, async (req, reply) => {
    const caller = apiKeyCaller(req);
    const body = req.body as ChatBody;
    const resolved = await ctx.resolve(caller.orgId, body.model);
    const request = toTextRequest(body, resolved);
    const c: Completion = {
      id: `chatcmpl-${crypto.randomBytes(12).toString('base64url')}`,
      created: Math.floor(deps.clock.now().getTime() / 1000),
      body,
      // buffered, written off the response path
      record: (usage) =>
        ctx.usage.add({
          orgId: caller.orgId,
          environment: caller.environment,
          model: `${resolved.provider}/${resolved.model}`,
          usage,
        }),
    };
    if (!body.stream) {
      const res = await deps.models.generateText(request);
      c.record(res.usage);
      return {
        id: c.id,
        object: 'chat.completion',
        created: c.created,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: res.text, refusal: null },
            logprobs: null,
            finish_reason: finishReason(res.finishReason),
          },
        ],
        usage: usageBody(res.usage),
      };
    }
    const { events } = deps.models.streamText(request);
    // The first event is awaited before any byte is sent, so a provider failure is still a clean error reply.
    const first = await events.next();
    await streamCompletion(reply, c, first, events);
  });
}

/** Writes the completion as server-sent events in OpenAI's chunk format, ending with `[DONE]`. */
async function streamCompletion(
  reply: FastifyReply,
  c: Completion,
  first: IteratorResult<StreamEvent>,
  events: AsyncGenerator<StreamEvent>,
): Promise<void> {
  const sse = (data: Record<string, unknown>) => `data: ${JSON.stringify(data)}\n\n`;
  const head = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.body.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    sse({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  reply.hijack();
  const raw = reply.raw;
  // A hijacked reply drops the headers set through Fastify (x-request-id, the v1 RateLimit headers).
  const set: Record<string, string | number | string[]> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) set[k] = v;
  raw.writeHead(200, {
    ...set,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  raw.write(chunk({ role: 'assistant', content: '' }, null));
  const write = (ev: StreamEvent) => {
    if (ev.type === 'text') raw.write(chunk({ content: ev.text }, null));
    else {
      raw.write(chunk({}, finishReason(ev.finishReason)));
      if (c.body.stream_options?.include_usage)
        raw.write(sse({ ...head, choices: [], usage: usageBody(ev.usage) }));
      c.record(ev.usage);
    }
  };
  try {
    if (!first.done) write(first.value);
    for await (const ev of events) {
      if (raw.destroyed) break;
      write(ev);
    }
    raw.write('data: [DONE]\n\n');
  } catch (err) {
    // Mid-stream failure: the status is already sent, so the error travels as an SSE event.
    const e = err instanceof ApiError ? err : errors.internal();
    raw.write(sse(errorBody(e)));
  }
  raw.end();
}
