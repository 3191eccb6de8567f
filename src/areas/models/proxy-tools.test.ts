import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../../../test/fakes/anthropic-server.ts';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startGoogleServer } from '../../../test/fakes/google-server.ts';
import { startMistralServer } from '../../../test/fakes/mistral-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedApiKey, seedOrg } from '../../../test/seed.ts';
import { modelUsage } from './tables.ts';

// Tool calling and images through the proxy with the official openai client, against local servers that
// speak OpenAI's, Anthropic's (tool_use / tool_result blocks) and Google's (functionCall parts) protocols.

type Vendor = 'openai' | 'pier' | 'anthropic' | 'google' | 'mistral';
let t: TestApp;
let client: OpenAI;
let base: string;
let f: Record<Vendor, FakeServer>;
let orgId: string;
let images: http.Server;
let imagesUrl: string;

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const dataUrl = `data:image/png;base64,${PNG.toString('base64')}`;

beforeAll(async () => {
  const [openai, pier, anthropic, google, mistral] = await Promise.all([
    startOpenAIServer('openai'),
    startOpenAIServer('pier'),
    startAnthropicServer(),
    startGoogleServer(),
    startMistralServer(),
  ]);
  f = { openai, pier, anthropic, google, mistral };
  // Images on a second loopback address, the one OUTBOUND_ALLOW opens (127.0.0.1 stays refused).
  images = http.createServer((req, res) => {
    if (req.url === '/big.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.alloc(21 * 1024 * 1024));
    } else if (req.url === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<p>not an image</p>');
    } else {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(PNG);
    }
  });
  await new Promise<void>((ok) => images.listen(0, '127.0.0.2', ok));
  imagesUrl = `http://127.0.0.2:${(images.address() as AddressInfo).port}`;
  t = await testApp({
    env: {
      OPENAI_API_KEY: 'sk-platform-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-ant-platform',
      ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
      GOOGLE_API_KEY: 'g-platform',
      GOOGLE_BASE_URL: `${google.url}/v1beta`,
      MISTRAL_API_KEY: 'm-platform',
      MISTRAL_BASE_URL: `${mistral.url}/v1`,
      PIER_MODELS_URL: `${pier.url}/v1`,
      MODEL_RETRY_BASE_MS: '5',
      OUTBOUND_ALLOW: '127.0.0.2',
    },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { org } = await seedOrg(t.deps);
  orgId = org.id;
  const key = await seedApiKey(t.deps, org.id, 'live');
  client = new OpenAI({ apiKey: key.key, baseURL: `${base}/v1/ai`, maxRetries: 0 });
});
afterAll(async () => {
  await t?.close();
  await Promise.all(Object.values(f ?? {}).map((s) => s.close()));
  images?.closeAllConnections();
  await new Promise((ok) => images?.close(ok));
});

const weather: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};
const lastBody = (s: FakeServer) => s.requests.at(-1)!.body as Record<string, unknown>;
const ask: ChatCompletionMessageParam = { role: 'user', content: 'Paris' };

const MODELS: [string, Vendor][] = [
  ['gpt-4o-mini', 'openai'],
  ['claude-sonnet-4-5', 'anthropic'],
  ['gemini-2.5-flash', 'google'],
  ['mistral-small-latest', 'mistral'],
  ['pier/llama3.2', 'pier'],
];

/** The vendor's own shape of the tool call and its result, as the upstream received them. */
function upstreamSawRoundTrip(v: Vendor, body: Record<string, unknown>) {
  const s = JSON.stringify(body);
  if (v === 'anthropic') {
    expect(s).toContain('"type":"tool_use"');
    expect(s).toContain('"type":"tool_result"');
  } else if (v === 'google') {
    expect(s).toMatch(/"functionCall":\{[^}]*"name":"get_weather","args":\{"city":"Paris"\}/);
    expect(s).toContain('"functionResponse"');
  } else {
    const msgs = body.messages as { role: string; tool_call_id?: string; tool_calls?: unknown[] }[];
    expect(msgs.find((m) => m.role === 'assistant')?.tool_calls).toHaveLength(1);
    expect(msgs.find((m) => m.role === 'tool')?.tool_call_id).toBeTruthy();
  }
}

describe('tool calling', () => {
  it.each(MODELS)('round trip with %s: call, tool result, answer (not streamed)', async (model, v) => {
    const first = await client.chat.completions.create({ model, messages: [ask], tools: [weather] });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(first.model).toBe(model);
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('not a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    const second = await client.chat.completions.create({
      model,
      tools: [weather],
      messages: [ask, choice.message, { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 °C' }],
    });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.content).toContain('the tool said sunny, 21 °C');
    upstreamSawRoundTrip(v, lastBody(f[v]));
  });

  it.each(MODELS)('round trip with %s, streamed in OpenAI chunks', async (model, v) => {
    const stream = client.chat.completions.stream({ model, messages: [ask], tools: [weather] });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    stream.on('chunk', (c) => void chunks.push(c));
    const done = await stream.finalChatCompletion();
    const msg = done.choices[0]!.message;
    expect(done.choices[0]!.finish_reason).toBe('tool_calls');
    const call = msg.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('not a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    // The first piece names the call (index, id, name); the arguments follow under the same index.
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, id: call.id, function: { name: 'get_weather' } });
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe(call.function.arguments);
    const second = client.chat.completions.stream({
      model,
      tools: [weather],
      messages: [
        ask,
        { role: 'assistant', content: null, tool_calls: msg.tool_calls },
        { role: 'tool', tool_call_id: call.id, content: 'rainy' },
      ],
    });
    const answer = await second.finalChatCompletion();
    expect(answer.choices[0]!.message.content).toContain('the tool said rainy');
    upstreamSawRoundTrip(v, lastBody(f[v]));
  });

  it('passes parallel_tool_calls and a named tool_choice on; two calls stream under two indexes', async () => {
    const clock = { ...weather, function: { ...weather.function, name: 'get_time' } };
    const two = await client.chat.completions
      .stream({ model: 'gpt-4o-mini', messages: [ask], tools: [weather, clock] })
      .finalChatCompletion();
    expect(two.choices[0]!.message.tool_calls?.map((c) => c.type === 'function' && c.function.name)).toEqual([
      'get_weather',
      'get_time',
    ]);
    const one = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [ask],
      tools: [weather, clock],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    expect(one.choices[0]!.message.tool_calls).toHaveLength(1);
    expect(lastBody(f.openai)).toMatchObject({
      parallel_tool_calls: false,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [ask],
      tools: [weather, clock],
      parallel_tool_calls: false,
    });
    expect(lastBody(f.anthropic).tool_choice).toMatchObject({ disable_parallel_tool_use: true });
  });

  it('refuses malformed tools and tool messages with 400, before any provider call', async () => {
    const before = f.openai.requests.length;
    const bad = async (body: Record<string, unknown>) => {
      const err = await client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [ask], ...body } as never)
        .catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      return err.error as { code: string; message: string };
    };
    expect((await bad({ tools: [{ type: 'function', function: { description: 'no name' } }] })).code).toBe(
      'VALIDATION_ERROR',
    );
    expect((await bad({ tools: [{ type: 'function', function: { name: 'has space' } }] })).code).toBe(
      'VALIDATION_ERROR',
    );
    expect(
      (await bad({ tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } }))
        .message,
    ).toContain("'nope'");
    const noId = await bad({ messages: [ask, { role: 'tool', content: 'x' }] });
    expect(noId.message).toContain('tool_call_id');
    const unknownId = await bad({ messages: [ask, { role: 'tool', tool_call_id: 'call_x', content: 'x' }] });
    expect(unknownId.message).toContain('answers no tool call');
    expect(f.openai.requests.length).toBe(before);
  });
});

describe('images', () => {
  const withImage = (url: string): ChatCompletionMessageParam[] => [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url } },
      ],
    },
  ];

  it('sends a data: URL image to each provider in its own shape', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: withImage(dataUrl) });
    expect(JSON.stringify(lastBody(f.openai))).toContain(`"url":"${dataUrl}"`);
    await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: withImage(dataUrl) });
    expect(JSON.stringify(lastBody(f.anthropic))).toContain(
      '"type":"image","source":{"type":"base64","media_type":"image/png"',
    );
    const answer = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: withImage(dataUrl),
    });
    expect(JSON.stringify(lastBody(f.google))).toContain(
      `"inlineData":{"mimeType":"image/png","data":"${PNG.toString('base64')}"`,
    );
    expect(answer.choices[0]!.message.content).toContain('What is this?');
  });

  it('fetches an http image through the SSRF guard and passes its bytes', async () => {
    await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: withImage(`${imagesUrl}/cat.png`),
    });
    expect(JSON.stringify(lastBody(f.anthropic))).toContain(`"data":"${PNG.toString('base64')}"`);
  });

  it('refuses private addresses, oversized images and non-images (4xx), without calling the provider', async () => {
    const before = f.openai.requests.length;
    const fail = (url: string) =>
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: withImage(url) }).catch((e) => e);
    const local = await fail(`${base}/v1/ai/models`);
    expect(local.status).toBe(400);
    expect(local.error).toMatchObject({ code: 'URL_NOT_ALLOWED' });
    expect((await fail('http://169.254.169.254/latest/meta-data')).status).toBe(400);
    const big = await fail(`${imagesUrl}/big.png`);
    expect(big.status).toBe(413);
    expect(big.error.code).toBe('PAYLOAD_TOO_LARGE');
    const bigData = await fail(`data:image/png;base64,${Buffer.alloc(21 * 1024 * 1024).toString('base64')}`);
    expect(bigData.status).toBe(413);
    expect((await fail(`${imagesUrl}/page.html`)).error.message).toContain('not an image');
    expect((await fail('data:text/plain;base64,aGk=')).status).toBe(400);
    const gone = await fail(`http://127.0.0.2:1/cat.png`);
    expect(gone.status).toBe(400);
    expect(gone.error.message).toContain('image_url');
    expect(f.openai.requests.length).toBe(before);
  });

  it('sends input_audio to OpenAI as its input_audio part', async () => {
    const wav = Buffer.from('RIFF fake wav').toString('base64');
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'user', content: [{ type: 'input_audio', input_audio: { data: wav, format: 'wav' } }] },
      ],
    });
    expect(JSON.stringify(lastBody(f.openai))).toContain(
      `"type":"input_audio","input_audio":{"data":"${wav}","format":"wav"}`,
    );
  });

  it('refuses audio input for a provider that cannot take it, naming the provider', async () => {
    const err = await client.chat.completions
      .create({
        model: 'claude-sonnet-4-5',
        messages: [
          {
            role: 'user',
            content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }],
          },
        ],
      })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ code: 'MODEL_CAPABILITY_UNSUPPORTED' });
    expect(err.error.message).toContain("'anthropic'");
  });
});

describe('fallbacks (models: [...])', () => {
  it('falls back from a failing model to a working one, and says which answered', async () => {
    const raw = await client.chat.completions
      .create({
        model: 'gpt-unavailable',
        messages: [ask],
        // @ts-expect-error OpenRouter's extension of the request
        models: ['claude-sonnet-4-5'],
      })
      .withResponse();
    expect(raw.data.model).toBe('claude-sonnet-4-5');
    expect(raw.response.headers.get('x-pier-model')).toBe('anthropic/claude-sonnet-4-5');
    expect(raw.data.choices[0]!.message.content).toBe('anthropic says: Paris');
    const params = { model: 'gpt-unavailable', messages: [ask], stream: true as const };
    const stream = await client.chat.completions
      .create({ ...params, ...{ models: ['gemini-2.5-flash'] } })
      .withResponse();
    expect(stream.response.headers.get('x-pier-model')).toBe('google/gemini-2.5-flash');
    let text = '';
    for await (const c of stream.data) {
      expect(c.model).toBe('gemini-2.5-flash');
      text += c.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('google says: Paris');
  });

  it('records usage for the model that answered, not the one that failed', async () => {
    const rows = () => t.deps.db.orm.select().from(modelUsage).where(eq(modelUsage.orgId, orgId));
    await expect
      .poll(async () => (await rows()).map((r) => r.model))
      .toContain('anthropic/claude-sonnet-4-5');
    expect((await rows()).map((r) => r.model)).not.toContain('openai/gpt-unavailable');
  });

  it('does not fall back once a stream has sent its first token: the failure ends the stream', async () => {
    const before = f.anthropic.requests.length;
    const params = { model: 'gpt-broken-stream', messages: [ask], stream: true as const };
    const stream = await client.chat.completions.create({ ...params, ...{ models: ['claude-sonnet-4-5'] } });
    let text = '';
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().catch((e) => e);
    expect(text).toBe('openai ');
    expect(err).toBeInstanceOf(Error);
    expect(f.anthropic.requests.length).toBe(before);
  });

  it('does not fall back on a request error (4xx), and answers the last failure when all fail', async () => {
    f.openai.failNext(400);
    const before = f.anthropic.requests.length;
    const err = await client.chat.completions
      // @ts-expect-error OpenRouter's extension of the request
      .create({ model: 'gpt-4o-mini', messages: [ask], models: ['claude-sonnet-4-5'] })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.code).toBe('MODEL_PROVIDER_REJECTED');
    expect(f.anthropic.requests.length).toBe(before);
    const all = await client.chat.completions
      // @ts-expect-error OpenRouter's extension of the request
      .create({ model: 'gpt-unavailable', messages: [ask], models: ['pier/also-unavailable'] })
      .catch((e) => e);
    expect(all.status).toBe(502);
    expect(all.error.message).toContain("'pier'");
  });
});
