import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../../../test/fakes/anthropic-server.ts';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startGoogleServer } from '../../../test/fakes/google-server.ts';
import { startMistralServer } from '../../../test/fakes/mistral-server.ts';
import { EMBED_DIM, startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { loadConfig } from '../../config.ts';
import { createModels, type Models, type StreamEvent } from './models.ts';

// createModels against real local HTTP servers speaking each vendor's wire format.

let openai: FakeServer;
let anthropic: FakeServer;
let google: FakeServer;
let mistral: FakeServer;
let pier: FakeServer;
let models: Models;

beforeAll(async () => {
  [openai, anthropic, google, mistral, pier] = await Promise.all([
    startOpenAIServer(),
    startAnthropicServer(),
    startGoogleServer(),
    startMistralServer(),
    startOpenAIServer('pier'),
  ]);
  models = createModels(
    loadConfig({
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
    }).models,
  );
});
afterAll(async () => {
  await Promise.all([openai, anthropic, google, mistral, pier].map((s) => s?.close()));
});

async function collect(events: AsyncGenerator<StreamEvent>) {
  let text = '';
  let finish: Extract<StreamEvent, { type: 'finish' }> | undefined;
  for await (const e of events) {
    if (e.type === 'text') text += e.text;
    else if (e.type === 'finish') finish = e;
  }
  return { text, finish };
}

describe('text generation through each vendor', () => {
  it.each([
    ['gpt-4o-mini', 'openai/gpt-4o-mini', 'openai'],
    ['claude-sonnet-4-5', 'anthropic/claude-sonnet-4-5', 'anthropic'],
    ['gemini-2.5-flash', 'google/gemini-2.5-flash', 'google'],
    ['mistral-small-latest', 'mistral/mistral-small-latest', 'mistral'],
    ['llama3.2', 'pier/llama3.2', 'pier'],
  ])('%s → %s', async (name, full, vendor) => {
    const res = await models.generateText({ model: name, system: 'Be brief.', prompt: 'hello there' });
    expect(res.text).toBe(`${vendor} says: hello there`);
    expect(res.model).toBe(full);
    expect(res.usage.completionTokens).toBe(4);
    expect(res.usage.totalTokens).toBe(res.usage.promptTokens + 4);
    const streamed = await collect(models.streamText({ model: name, prompt: 'stream me' }).events);
    expect(streamed.text).toBe(`${vendor} says: stream me`);
    expect(streamed.finish).toMatchObject({ finishReason: 'stop', usage: { completionTokens: 4 } });
  });

  it('sends each vendor its own authentication header', () => {
    const last = (s: FakeServer) => s.requests.at(-1)!.headers;
    expect(last(openai).authorization).toBe('Bearer sk-platform-openai');
    expect(last(anthropic)['x-api-key']).toBe('sk-ant-platform');
    expect(last(google)['x-goog-api-key']).toBe('g-platform');
    expect(last(mistral).authorization).toBe('Bearer m-platform');
  });

  it('uses a resolved organization key instead of the platform key when given', async () => {
    await models.generateText({
      resolved: {
        provider: 'openai',
        model: 'gpt-4o',
        baseUrl: `${openai.url}/v1`,
        apiKey: 'sk-org-own',
        keySource: 'organization',
      },
      prompt: 'x',
    });
    expect(openai.requests.at(-1)!.headers.authorization).toBe('Bearer sk-org-own');
  });
});

describe('structured output and embeddings', () => {
  it('asks for JSON against the schema and returns the parsed object', async () => {
    const res = await models.generateObject({
      model: 'gpt-4o-mini',
      schema: {
        type: 'object',
        properties: { title: { type: 'string' }, words: { type: 'number' } },
        required: ['title', 'words'],
        additionalProperties: false,
      },
      prompt: 'four',
    });
    expect(res).toMatchObject({ object: { title: 'four', words: 4 }, model: 'openai/gpt-4o-mini' });
    const sent = openai.requests.at(-1)!.body as { response_format?: { type: string } };
    expect(sent.response_format?.type).toBe('json_schema');
  });

  it('summarize and extract use TEXT_MODEL when one is configured, and say so', async () => {
    const withModel = createModels(
      loadConfig({ PIER_MODELS_URL: `${pier.url}/v1`, TEXT_MODEL: 'pier/qwen3' }).models,
    );
    const s = await withModel.summarize(['first note', 'second note']);
    expect(s.model).toBe('pier/qwen3');
    expect(s.text).toContain('pier says:');
    const ex = await withModel.extract('<p>hi</p>', {
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
      additionalProperties: false,
    });
    expect(ex.model).toBe('pier/qwen3');
    expect(typeof ex.data.name).toBe('string');
  });

  it.each([
    ['openai/text-embedding-3-small', () => openai, 2],
    ['google/gemini-embedding-001', () => google, 3], // at most 100 per call: 100 + 28, then 22
    ['mistral/mistral-embed', () => mistral, 5], // the Mistral provider sends at most 32 per call
    ['pier/nomic-embed-text', () => pier, 2],
  ])('embeds through %s, batched', async (model, fake, calls) => {
    const server = fake();
    // A memory batch (100) is one request; 150 texts take two (batches of 128).
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i}`);
    const before = server.requests.length;
    const res = await models.embed(texts, { model });
    expect(res).toMatchObject({ model, dimension: EMBED_DIM });
    expect(res.vectors).toHaveLength(150);
    expect(server.requests.length - before).toBe(calls); // batches of 128 (or the provider's maximum)
  });

  it('refuses embeddings from a vendor without them', async () => {
    await expect(models.embed(['x'], { model: 'anthropic/claude-3-5-haiku' })).rejects.toMatchObject({
      code: 'MODEL_CAPABILITY_UNSUPPORTED',
      status: 400,
    });
  });
});

describe('images and speech', () => {
  it('generates images and speech where the provider offers them', async () => {
    const img = await models.generateImage({
      model: 'openai/dall-e-3',
      prompt: 'a chair',
      n: 2,
      size: '1024x1024',
    });
    expect(img.model).toBe('openai/dall-e-3');
    expect(img.images).toHaveLength(2);
    expect(img.images[0]!.mediaType).toBe('image/png');
    const speech = await models.generateSpeech({ model: 'tts-1', text: 'hello', voice: 'alloy' });
    expect(Buffer.from(speech.audio.base64, 'base64').toString()).toBe('ID3fake-mp3:hello');
    expect(speech.model).toBe('openai/tts-1');
    await expect(models.generateImage({ model: 'anthropic/claude-x', prompt: 'p' })).rejects.toMatchObject({
      code: 'MODEL_CAPABILITY_UNSUPPORTED',
    });
  });
});

describe('provider failures', () => {
  it('retries a 5xx and a 429 and then succeeds', async () => {
    const before = anthropic.requests.length;
    anthropic.failNext(503);
    anthropic.failNext(429, 1, { 'retry-after-ms': '5' });
    const res = await models.generateText({ model: 'claude-3-5-haiku-latest', prompt: 'again' });
    expect(res.text).toBe('anthropic says: again');
    expect(anthropic.requests.length - before).toBe(3);
  });

  it('surfaces a persistent 429 as MODEL_PROVIDER_RATE_LIMITED with retry-after, 5xx as a 502', async () => {
    google.failNext(429, 3, { 'retry-after': '7' });
    const limited = await models.generateText({ model: 'gemini-2.5-flash', prompt: 'x' }).catch((e) => e);
    expect(limited).toMatchObject({
      code: 'MODEL_PROVIDER_RATE_LIMITED',
      status: 429,
      headers: { 'retry-after': '7' },
    });
    mistral.failNext(500, 3);
    const failed = await models.generateText({ model: 'mistral-large-latest', prompt: 'x' }).catch((e) => e);
    expect(failed).toMatchObject({ code: 'MODEL_PROVIDER_ERROR', status: 502 });
    expect(failed.message).not.toContain('m-platform');
  });

  it('retries a stream that fails before its first token', async () => {
    openai.failNext(502);
    const streamed = await collect(
      models.streamText({ model: 'gpt-4o-mini', prompt: 'retry stream' }).events,
    );
    expect(streamed.text).toBe('openai says: retry stream');
  });

  it('answers an unreachable provider with MODEL_PROVIDER_UNAVAILABLE', async () => {
    const dead = createModels(
      loadConfig({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', MODEL_MAX_RETRIES: '0' })
        .models,
    );
    await expect(dead.generateText({ model: 'gpt-4o', prompt: 'x' })).rejects.toMatchObject({
      code: 'MODEL_PROVIDER_UNAVAILABLE',
      status: 503,
    });
  });
});
