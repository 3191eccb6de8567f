import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { StreamEvent, Usage } from '../../core/ai/models.ts';
import { ApiError, errorBody, errors } from '../../core/errors.ts';
import { apiKeyCaller, operationDoc } from '../../http/v1-kit.ts';
import { toConversation, toTextRequest } from './chat-messages.ts';
import { type ChatBody, chatBody, chatCompletionSchema, chatSseSchema } from './chat-schema.ts';
import {
  assertProviderTakes,
  MODEL_HEADER,
  modelHeaderValue,
  openEventStream,
  planOf,
  recordUsage,
  type Target,
  withFallbacks,
} from './proxy-call.ts';
import { PROXY_ERRORS, type ProxyContext } from './proxy-context.ts';
import { PROXY_BODY_LIMIT } from './proxy-media.ts';

export { chatBody, chatCompletionSchema };

// POST /v1/ai/chat/completions: OpenAI's wire format in and out (chat-schema.ts), whatever vendor serves
// the model, with tools, images, JSON output and fallbacks between models.

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
    errors: [...PROXY_ERRORS, 'IDEMPOTENCY_STREAM_UNSUPPORTED', 'URL_NOT_ALLOWED', 'PAYLOAD_TOO_LARGE'],
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
          'text/event-stream': { schema: chatSseSchema },
        },
      },
      ...errorResponses,
    },
  };
}

/** What one completion's answers share: its id, creation time, the model that answered, usage. */
type Completion = {
  id: string;
  created: number;
  body: ChatBody;
  model: string;
  record: (usage: Usage) => void;
};

export async function chatCompletionsRoute(app: FastifyInstance, ctx: ProxyContext): Promise<void> {
  const { deps } = ctx;
  const config = { v1Streams: (b: unknown) => (b as ChatBody).stream === true };
  const opts = { schema: chatRouteSchema(), config, bodyLimit: PROXY_BODY_LIMIT };
  app.post('/chat/completions', opts, async (req, reply) => {
    const caller = apiKeyCaller(req);
    const body = req.body as ChatBody;
    // Tools and formats are checked, and images fetched, once for all the models that may be tried.
    const conv = await toConversation(body.messages, deps.config.outboundAllow);
    const request = toTextRequest(body, conv);
    const completion = (t: Target): Completion => ({
      id: `chatcmpl-${crypto.randomBytes(12).toString('base64url')}`,
      created: Math.floor(deps.clock.now().getTime() / 1000),
      body,
      model: t.name,
      record: (usage) => recordUsage(ctx, caller, t, usage),
    });
    if (!body.stream) {
      const { target, value: res } = await withFallbacks(ctx, caller, planOf(body, request), (t) => {
        assertProviderTakes(t, conv);
        return deps.models.generateText({ ...request, resolved: t.resolved });
      });
      const c = completion(target);
      c.record(res.usage);
      reply.header(MODEL_HEADER, modelHeaderValue(target));
      const toolCalls = res.toolCalls.map((tc) => ({
        id: tc.id,
        type: 'function' as const,
        function: { name: tc.name, arguments: tc.args },
      }));
      return {
        id: c.id,
        object: 'chat.completion',
        created: c.created,
        model: c.model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: res.text || toolCalls.length === 0 ? res.text : null,
              refusal: null,
              ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
            },
            logprobs: null,
            finish_reason: toolCalls.length ? 'tool_calls' : finishReason(res.finishReason),
          },
        ],
        usage: usageBody(res.usage),
      };
    }
    // Each model's first event is awaited before any byte is sent: a provider failure is still a clean
    // error reply, or a fallback to the next model.
    const { target, value } = await withFallbacks(ctx, caller, planOf(body, request), async (t) => {
      assertProviderTakes(t, conv);
      const { events } = deps.models.streamText({ ...request, resolved: t.resolved });
      return { events, first: await events.next() };
    });
    reply.header(MODEL_HEADER, modelHeaderValue(target));
    await streamCompletion(reply, completion(target), value.first, value.events);
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
  const head = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    sse({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const raw = openEventStream(reply);
  raw.write(chunk({ role: 'assistant', content: '' }, null));
  // OpenAI numbers a turn's tool calls from 0; later pieces of a call carry only its index.
  const toolIndex = new Map<string, number>();
  const write = (ev: StreamEvent) => {
    if (ev.type === 'text') raw.write(chunk({ content: ev.text }, null));
    else if (ev.type === 'tool-start') {
      const index = toolIndex.size;
      toolIndex.set(ev.id, index);
      const call = { index, id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } };
      raw.write(chunk({ tool_calls: [call] }, null));
    } else if (ev.type === 'tool-args') {
      const index = toolIndex.get(ev.id) ?? 0;
      raw.write(chunk({ tool_calls: [{ index, function: { arguments: ev.args } }] }, null));
    } else {
      raw.write(chunk({}, toolIndex.size ? 'tool_calls' : finishReason(ev.finishReason)));
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
