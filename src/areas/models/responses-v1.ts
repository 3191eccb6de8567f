import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { StreamEvent, Usage } from '../../core/ai/models.ts';
import { ApiError, errorBody, errors } from '../../core/errors.ts';
import { apiKeyCaller, operationDoc } from '../../http/v1-kit.ts';
import { toConversation, toTextRequest } from './chat-messages.ts';
import {
  assertProviderTakes,
  MODEL_HEADER,
  modelHeaderValue,
  openEventStream,
  planOf,
  recordUsage,
  withFallbacks,
} from './proxy-call.ts';
import { PROXY_ERRORS, type ProxyContext } from './proxy-context.ts';
import { PROXY_BODY_LIMIT } from './proxy-media.ts';
import { type ResponsesBody, responsesBody, toChatBody } from './responses-schema.ts';

// POST /v1/ai/responses: OpenAI's Responses API over the same flow as chat completions (the request is
// rewritten as one), answered as a `response` object or, with `stream: true`, as its typed events.

const id = (prefix: string) => `${prefix}_${crypto.randomBytes(12).toString('hex')}`;

const textContent = z.object({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.never()),
});
const messageItem = z.object({
  type: z.literal('message'),
  id: z.string(),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
  role: z.literal('assistant'),
  content: z.array(textContent),
});
const functionCallItem = z.object({
  type: z.literal('function_call'),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
});
type OutputItem = z.infer<typeof messageItem> | z.infer<typeof functionCallItem>;

export const responseSchema = z
  .object({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number().int(),
    status: z.enum(['in_progress', 'completed', 'incomplete']),
    model: z.string(),
    output: z.array(z.union([messageItem, functionCallItem])),
    usage: z
      .object({
        input_tokens: z.number(),
        input_tokens_details: z.object({ cached_tokens: z.number() }),
        output_tokens: z.number(),
        output_tokens_details: z.object({ reasoning_tokens: z.number() }),
        total_tokens: z.number(),
      })
      .nullable(),
    error: z.null(),
    incomplete_details: z.object({ reason: z.string() }).nullable(),
    instructions: z.string().nullable(),
    parallel_tool_calls: z.boolean(),
    previous_response_id: z.null(),
    store: z.boolean(),
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    max_output_tokens: z.number().nullable(),
    metadata: z.record(z.string(), z.string()),
  })
  .describe('A response (OpenAI Responses API format)');

/** What one response's answers share: its id, time, request, the model that answered. */
type Resp = { id: string; createdAt: number; body: ResponsesBody; model: string };

function responseObject(r: Resp, output: OutputItem[], usage: Usage | null, finish?: string) {
  const incomplete = finish === 'length';
  return {
    id: r.id,
    object: 'response' as const,
    created_at: r.createdAt,
    status: !usage ? ('in_progress' as const) : incomplete ? ('incomplete' as const) : ('completed' as const),
    model: r.model,
    output,
    usage: usage && {
      input_tokens: usage.promptTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.completionTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.totalTokens,
    },
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: r.body.instructions ?? null,
    parallel_tool_calls: r.body.parallel_tool_calls ?? true,
    previous_response_id: null,
    store: false,
    temperature: r.body.temperature ?? null,
    top_p: r.body.top_p ?? null,
    max_output_tokens: r.body.max_output_tokens ?? null,
    metadata: r.body.metadata ?? {},
  };
}

function routeSchema() {
  const { errorResponses, ...doc } = operationDoc('ai', {
    name: 'ai.responses',
    summary: 'Creates a model response (OpenAI Responses API), streamed as typed events with `stream: true`.',
    description:
      'Stateless: no `previous_response_id`, nothing stored; function tools only. Idempotency-Key is honoured without `stream`.',
    errors: [...PROXY_ERRORS, 'IDEMPOTENCY_STREAM_UNSUPPORTED', 'URL_NOT_ALLOWED', 'PAYLOAD_TOO_LARGE'],
    errorStatuses: [502, 503],
  });
  const sse = z
    .string()
    .describe('Server-sent events `event: <type>` / `data: <event JSON>`, ending with response.completed');
  return {
    ...doc,
    body: responsesBody,
    response: {
      200: {
        description: 'The response, or with `stream: true` its events.',
        content: { 'application/json': { schema: responseSchema }, 'text/event-stream': { schema: sse } },
      },
      ...errorResponses,
    },
  };
}

export async function responsesRoute(app: FastifyInstance, ctx: ProxyContext): Promise<void> {
  const { deps } = ctx;
  const config = { v1Streams: (b: unknown) => (b as ResponsesBody).stream === true };
  app.post(
    '/responses',
    { schema: routeSchema(), config, bodyLimit: PROXY_BODY_LIMIT },
    async (req, reply) => {
      const caller = apiKeyCaller(req);
      const body = req.body as ResponsesBody;
      const chat = toChatBody(body);
      const conv = await toConversation(chat.messages, deps.config.outboundAllow);
      const request = toTextRequest(chat, conv);
      const createdAt = Math.floor(deps.clock.now().getTime() / 1000);
      if (!body.stream) {
        const { target, value: res } = await withFallbacks(ctx, caller, planOf(body, request), (t) => {
          assertProviderTakes(t, conv);
          return deps.models.generateText({ ...request, resolved: t.resolved });
        });
        recordUsage(ctx, caller, target, res.usage);
        reply.header(MODEL_HEADER, modelHeaderValue(target));
        const output: OutputItem[] = [];
        if (res.text || res.toolCalls.length === 0)
          output.push({
            type: 'message',
            id: id('msg'),
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: res.text, annotations: [] }],
          });
        for (const c of res.toolCalls)
          output.push({
            type: 'function_call',
            id: id('fc'),
            call_id: c.id,
            name: c.name,
            arguments: c.args,
            status: 'completed',
          });
        const r = { id: id('resp'), createdAt, body, model: target.name };
        return responseObject(r, output, res.usage, res.finishReason);
      }
      const { target, value } = await withFallbacks(ctx, caller, planOf(body, request), async (t) => {
        assertProviderTakes(t, conv);
        const { events } = deps.models.streamText({ ...request, resolved: t.resolved });
        return { events, first: await events.next() };
      });
      reply.header(MODEL_HEADER, modelHeaderValue(target));
      const r = { id: id('resp'), createdAt, body, model: target.name };
      await streamResponse(reply, r, value.first, value.events, (u) => recordUsage(ctx, caller, target, u));
    },
  );
}

/** The response's events as OpenAI sends them: each output item added, its deltas, done; then completed. */
async function streamResponse(
  reply: FastifyReply,
  r: Resp,
  first: IteratorResult<StreamEvent>,
  events: AsyncGenerator<StreamEvent>,
  record: (u: Usage) => void,
): Promise<void> {
  const raw = openEventStream(reply);
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    raw.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const output: OutputItem[] = [];
  let text: { item: z.infer<typeof messageItem>; index: number } | null = null;
  const calls = new Map<string, { item: z.infer<typeof functionCallItem>; index: number }>();
  const closeText = () => {
    if (!text) return;
    const { item, index } = text;
    const part = item.content[0]!;
    const at = { item_id: item.id, output_index: index, content_index: 0 };
    send('response.output_text.done', { ...at, text: part.text, logprobs: [] });
    send('response.content_part.done', { ...at, part });
    item.status = 'completed';
    send('response.output_item.done', { output_index: index, item });
    text = null;
  };
  const closeCalls = () => {
    for (const { item, index } of calls.values()) {
      if (item.status === 'completed') continue;
      send('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        name: item.name,
        arguments: item.arguments,
      });
      item.status = 'completed';
      send('response.output_item.done', { output_index: index, item });
    }
  };
  const write = (ev: StreamEvent) => {
    if (ev.type === 'text') {
      if (!text) {
        const item = {
          type: 'message' as const,
          id: id('msg'),
          status: 'in_progress' as const,
          role: 'assistant' as const,
          content: [] as z.infer<typeof textContent>[],
        };
        text = { item, index: output.push(item) - 1 };
        send('response.output_item.added', { output_index: text.index, item: { ...item, content: [] } });
        const part = { type: 'output_text' as const, text: '', annotations: [] };
        item.content.push({ ...part });
        send('response.content_part.added', {
          item_id: item.id,
          output_index: text.index,
          content_index: 0,
          part,
        });
      }
      text.item.content[0]!.text += ev.text;
      const at = { item_id: text.item.id, output_index: text.index, content_index: 0 };
      send('response.output_text.delta', { ...at, delta: ev.text, logprobs: [] });
    } else if (ev.type === 'tool-start') {
      closeText();
      const item = {
        type: 'function_call' as const,
        id: id('fc'),
        call_id: ev.id,
        name: ev.name,
        arguments: '',
        status: 'in_progress' as 'in_progress' | 'completed',
      };
      const index = output.push(item) - 1;
      calls.set(ev.id, { item, index });
      send('response.output_item.added', { output_index: index, item: { ...item } });
    } else if (ev.type === 'tool-args') {
      const c = calls.get(ev.id);
      if (!c) return;
      c.item.arguments += ev.args;
      send('response.function_call_arguments.delta', {
        item_id: c.item.id,
        output_index: c.index,
        delta: ev.args,
      });
    } else {
      closeText();
      closeCalls();
      record(ev.usage);
      send('response.completed', { response: responseObject(r, output, ev.usage, ev.finishReason) });
    }
  };
  const created = responseObject(r, [], null);
  send('response.created', { response: created });
  send('response.in_progress', { response: created });
  try {
    if (!first.done) write(first.value);
    for await (const ev of events) {
      if (raw.destroyed) break;
      write(ev);
    }
  } catch (err) {
    // Mid-stream failure: OpenAI's `error` event, with our envelope's code and message.
    const e = err instanceof ApiError ? err : errors.internal();
    const { error } = errorBody(e);
    send('error', { code: error.code, message: error.message, param: null });
  }
  raw.end();
}
