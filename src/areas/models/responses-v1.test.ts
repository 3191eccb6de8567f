import OpenAI from 'openai';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../../../test/fakes/anthropic-server.ts';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startGoogleServer } from '../../../test/fakes/google-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedApiKey, seedOrg } from '../../../test/seed.ts';

// The Responses API with the official openai client's responses.create and responses.stream.

let t: TestApp;
let client: OpenAI;
let f: Record<'openai' | 'anthropic' | 'google', FakeServer>;

beforeAll(async () => {
  const [openai, anthropic, google] = await Promise.all([
    startOpenAIServer('openai'),
    startAnthropicServer(),
    startGoogleServer(),
  ]);
  f = { openai, anthropic, google };
  t = await testApp({
    env: {
      OPENAI_API_KEY: 'sk-platform-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-ant-platform',
      ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
      GOOGLE_API_KEY: 'g-platform',
      GOOGLE_BASE_URL: `${google.url}/v1beta`,
      MODEL_RETRY_BASE_MS: '5',
    },
  });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { org } = await seedOrg(t.deps);
  const key = await seedApiKey(t.deps, org.id, 'live');
  client = new OpenAI({ apiKey: key.key, baseURL: `${base}/v1/ai`, maxRetries: 0 });
});
afterAll(async () => {
  await t?.close();
  await Promise.all(Object.values(f ?? {}).map((s) => s.close()));
});

const weather: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

describe('POST /v1/ai/responses', () => {
  it('answers text input with instructions; output_text is the answer', async () => {
    const res = await client.responses.create({
      model: 'gpt-4o-mini',
      instructions: 'Be brief.',
      input: 'hello there',
    });
    expect(res.object).toBe('response');
    expect(res.status).toBe('completed');
    expect(res.output_text).toBe('openai says: hello there');
    expect(res.usage?.total_tokens).toBeGreaterThan(0);
    const sent = f.openai.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });

  it.each(['gpt-4o-mini', 'claude-sonnet-4-5', 'gemini-2.5-flash'])(
    'runs a function tool round trip with %s (not streamed)',
    async (model) => {
      const first = await client.responses.create({ model, input: 'Paris', tools: [weather] });
      const call = first.output.find((o) => o.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error('no function call');
      expect(call.name).toBe('get_weather');
      expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
      const input: ResponseInputItem[] = [
        { role: 'user', content: 'Paris' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
      ];
      const second = await client.responses.create({ model, input, tools: [weather] });
      expect(second.output_text).toContain('the tool said sunny');
    },
  );

  it.each(['gpt-4o-mini', 'claude-sonnet-4-5', 'gemini-2.5-flash'])(
    'streams text and function call events that responses.stream parses (%s)',
    async (model) => {
      const types: string[] = [];
      const stream = client.responses.stream({ model, input: 'hello there' });
      let deltas = '';
      stream.on('response.output_text.delta', (e) => {
        deltas += e.delta;
      });
      stream.on('event', (e) => void types.push(e.type));
      const done = await stream.finalResponse();
      expect(done.output_text).toContain('says: hello there');
      expect(deltas).toBe(done.output_text);
      // OpenAI's order of events for one message with one text part.
      expect(types.filter((e, i) => e !== types[i - 1])).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);

      const tool = client.responses.stream({ model, input: 'Paris', tools: [weather] });
      let args = '';
      tool.on('response.function_call_arguments.delta', (e) => {
        args += e.delta;
      });
      const called = await tool.finalResponse();
      const call = called.output.find((o) => o.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error('no function call');
      expect(call.name).toBe('get_weather');
      expect(args).toBe(call.arguments);
      expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
      const answer = await client.responses
        .stream({
          model,
          tools: [weather],
          input: [
            { role: 'user', content: 'Paris' },
            call,
            { type: 'function_call_output', call_id: call.call_id, output: 'rainy' },
          ],
        })
        .finalResponse();
      expect(answer.output_text).toContain('the tool said rainy');
    },
  );

  it('takes an input_image part and hands each vendor the image in its own shape', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const input: ResponseInputItem[] = [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' },
        ],
      },
    ];
    const a = await client.responses.create({ model: 'claude-sonnet-4-5', input });
    expect(a.output_text).toBe('anthropic says: What is this?');
    expect(JSON.stringify(f.anthropic.requests.at(-1)!.body)).toContain(
      `"type":"image","source":{"type":"base64","media_type":"image/png","data":"${png}"`,
    );
    await client.responses.create({ model: 'gemini-2.5-flash', input });
    expect(JSON.stringify(f.google.requests.at(-1)!.body)).toContain(
      `"inlineData":{"mimeType":"image/png","data":"${png}"`,
    );
  });

  it('honours text.format json_schema', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const res = await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'Paris',
      text: { format: { type: 'json_schema', name: 'city', schema, strict: true } },
    });
    expect(JSON.parse(res.output_text)).toEqual({ city: 'Paris' });
  });

  it('falls back through models, replays with an Idempotency-Key, and says which model answered', async () => {
    const body = { model: 'gpt-unavailable', input: 'hello there', ...{ models: ['claude-sonnet-4-5'] } };
    const headers = { 'Idempotency-Key': `resp-${Date.now()}` };
    const first = await client.responses.create(body, { headers }).withResponse();
    expect(first.data.model).toBe('claude-sonnet-4-5');
    expect(first.response.headers.get('x-pier-model')).toBe('anthropic/claude-sonnet-4-5');
    expect(first.data.output_text).toBe('anthropic says: hello there');
    const calls = f.anthropic.requests.length;
    const again = await client.responses.create(body, { headers }).withResponse();
    expect(again.data.id).toBe(first.data.id);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(f.anthropic.requests.length).toBe(calls);
  });

  it('refuses what it does not keep or run: previous_response_id, built-in tools (400)', async () => {
    const prev = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'x', previous_response_id: 'resp_123' })
      .catch((e) => e);
    expect(prev.status).toBe(400);
    expect(prev.error.message).toContain('previous_response_id');
    const builtIn = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'x', tools: [{ type: 'web_search' }] })
      .catch((e) => e);
    expect(builtIn.status).toBe(400);
    expect(builtIn.error.message).toContain("'web_search'");
    const orphan = await client.responses
      .create({ model: 'gpt-4o-mini', input: [{ type: 'function_call_output', call_id: 'c1', output: 'x' }] })
      .catch((e) => e);
    expect(orphan.status).toBe(400);
  });
});
