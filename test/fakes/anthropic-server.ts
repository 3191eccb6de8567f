import { type FakeServer, json, replyText, sse, startFake, words } from './fake-server.ts';

// Anthropic's Messages API: POST /v1/messages with x-api-key and anthropic-version, JSON or SSE events.

type Block = { type: string; text?: string };
type Msg = { role: string; content: string | Block[] };
const textOf = (c: Msg['content']) => (typeof c === 'string' ? c : c.map((b) => b.text ?? '').join(''));

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
    const body = req.body as { model: string; messages: Msg[]; system?: string | Block[]; stream?: boolean };
    const last = textOf([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
    const system =
      typeof body.system === 'string' ? body.system : (body.system ?? []).map((b) => b.text).join(' ');
    const text = replyText('anthropic', last);
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
