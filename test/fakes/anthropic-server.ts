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

// Anthropic's Messages API: POST /v1/messages with x-api-key and anthropic-version, JSON or SSE events.

type Block = { type: string; text?: string; content?: string | Block[] };
type Msg = { role: string; content: string | Block[] };
const textOf = (c: Msg['content']): string =>
  typeof c === 'string' ? c : c.map((b) => b.text ?? (b.content ? textOf(b.content) : '')).join('');
const toolResultOf = (m: Msg | undefined) =>
  typeof m?.content === 'string' ? undefined : m?.content.find((b) => b.type === 'tool_result');
type Tool = { name: string; input_schema?: Parameters<typeof sample>[0] };

export function startAnthropicServer(): Promise<FakeServer> {
  return startFake((req, res) => {
    if (req.method === 'GET' && req.path.startsWith('/v1/models') && req.headers['x-api-key']) {
      json(res, 200, {
        data: [
          {
            type: 'model',
            id: 'claude-sonnet-4-5',
            display_name: 'Claude',
            created_at: '2025-09-29T00:00:00Z',
          },
        ],
        has_more: false,
      });
      return;
    }
    if (req.method !== 'POST' || req.path !== '/v1/messages') {
      json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'Not found' } });
      return;
    }
    if (!req.headers['x-api-key'] || !req.headers['anthropic-version']) {
      json(res, 401, {
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      });
      return;
    }
    const body = req.body as {
      model: string;
      messages: Msg[];
      system?: string | Block[];
      stream?: boolean;
      tools?: Tool[];
      tool_choice?: { disable_parallel_tool_use?: boolean };
    };
    // Failing models, in Anthropic's own error shapes (fallback tests): '…unavailable…' is overloaded (529),
    // '…ratelimited…' rate limited (429).
    if (body.model.includes('unavailable')) {
      json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      return;
    }
    if (body.model.includes('ratelimited')) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(
        JSON.stringify({
          type: 'error',
          error: {
            type: 'rate_limit_error',
            message: 'Number of request tokens has exceeded your rate limit.',
          },
        }),
      );
      return;
    }
    const last = textOf([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
    const system =
      typeof body.system === 'string' ? body.system : (body.system ?? []).map((b) => b.text).join(' ');
    const result = toolResultOf(body.messages.at(-1));
    // The SDK's forced JSON tool (structured output) is answered as a tool call too, as Anthropic does.
    if (body.tools?.length && !result) {
      const calls = toolCalls(
        body.tools.map((t) => ({ name: t.name, schema: t.input_schema })),
        last,
        !body.tool_choice?.disable_parallel_tool_use,
      );
      answerToolUse(res, body, calls);
      return;
    }
    // Native structured output (output_config.format): the text is an object of the schema.
    const format = (body as { output_config?: { format?: { schema?: Tool['input_schema'] } } }).output_config
      ?.format?.schema;
    const text = result
      ? toolAnswer('anthropic', textOf(result.content ?? ''))
      : format
        ? JSON.stringify(sample(format, last))
        : replyText('anthropic', last);
    const input = words(`${system} ${body.messages.map((m) => textOf(m.content)).join(' ')}`).length;
    const output = words(text).length;
    if (!body.stream) {
      json(res, 200, {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: input, output_tokens: output },
      });
      return;
    }
    sse(res, [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: 'msg_fake',
            type: 'message',
            role: 'assistant',
            model: body.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: input, output_tokens: 1 },
          },
        },
      },
      {
        event: 'content_block_start',
        data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      },
      ...text.split(/(?<= )/).map((t) => ({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } },
      })),
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: output },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  });
}

/** tool_use blocks, whole or streamed as Anthropic does (content_block_start, then input_json_delta pieces). */
function answerToolUse(
  res: Parameters<Parameters<typeof startFake>[0]>[1],
  body: { model: string; stream?: boolean },
  calls: { id: string; name: string; input: unknown }[],
): void {
  const blocks = calls.map((c) => ({
    type: 'tool_use',
    id: c.id.replace('call_', 'toolu_'),
    name: c.name,
    input: c.input,
  }));
  const usage = { input_tokens: 5, output_tokens: 7 };
  if (!body.stream) {
    json(res, 200, {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: blocks,
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage,
    });
    return;
  }
  const message = { id: 'msg_fake', type: 'message', role: 'assistant', model: body.model, content: [] };
  sse(res, [
    { event: 'message_start', data: { type: 'message_start', message: { ...message, usage } } },
    ...blocks.flatMap((b, index) => {
      const json = JSON.stringify(b.input);
      const half = Math.ceil(json.length / 2);
      return [
        {
          event: 'content_block_start',
          data: { type: 'content_block_start', index, content_block: { ...b, input: {} } },
        },
        ...[json.slice(0, half), json.slice(half)].map((partial_json) => ({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
        })),
        { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
      ];
    }),
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 7 },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ]);
}
