import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../../../test/fakes/anthropic-server.ts';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startGoogleServer } from '../../../test/fakes/google-server.ts';
import { startMistralServer } from '../../../test/fakes/mistral-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedApiKey, seedOrg } from '../../../test/seed.ts';

// response_format through the official openai client: passed to OpenAI-compatible upstreams as sent,
// translated by the AI SDK for Anthropic and Google, refused (never dropped) where a provider cannot.

let t: TestApp;
let client: OpenAI;
let f: Record<'openai' | 'pier' | 'anthropic' | 'google' | 'mistral', FakeServer>;

beforeAll(async () => {
  const [openai, pier, anthropic, google, mistral] = await Promise.all([
    startOpenAIServer('openai'),
    startOpenAIServer('pier'),
    startAnthropicServer(),
    startGoogleServer(),
    startMistralServer(),
  ]);
  f = { openai, pier, anthropic, google, mistral };
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

const schema = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer' } },
  required: ['city', 'population'],
  additionalProperties: false,
};
const jsonSchemaFormat = {
  type: 'json_schema' as const,
  json_schema: { name: 'city', schema, strict: true },
};
const lastBody = (s: FakeServer) => s.requests.at(-1)!.body as Record<string, unknown>;

describe('response_format', () => {
  it.each([
    ['gpt-4o-mini', 'openai'],
    ['pier/llama3.2', 'pier'],
    ['mistral-small-latest', 'mistral'],
  ] as const)(
    'json_schema reaches %s as sent, and the answer parses against the schema',
    async (model, p) => {
      const res = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Paris' }],
        response_format: jsonSchemaFormat,
      });
      expect(lastBody(f[p]).response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'city', schema, strict: true },
      });
      const answer = JSON.parse(res.choices[0]!.message.content!);
      expect(new Ajv().validate(schema, answer)).toBe(true);
      expect(answer).toEqual({ city: 'Paris', population: 5 });
    },
  );

  it('json_schema without strict is sent non-strict (OpenAI’s default); json_object streams', async () => {
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema } },
    });
    expect(lastBody(f.openai).response_format).toMatchObject({ json_schema: { strict: false } });
    const stream = await client.chat.completions.create({
      model: 'pier/llama3.2',
      messages: [{ role: 'user', content: 'hello there' }],
      response_format: { type: 'json_object' },
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(lastBody(f.pier).response_format).toEqual({ type: 'json_object' });
    expect(JSON.parse(text)).toEqual({ echo: 'hello there' });
  });

  it('is translated for Google and Anthropic through the AI SDK, and their answers parse', async () => {
    const g = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Paris' }],
      response_format: jsonSchemaFormat,
    });
    const gen = lastBody(f.google).generationConfig as Record<string, unknown>;
    expect(gen.responseMimeType).toBe('application/json');
    expect(gen.responseJsonSchema).toMatchObject({ properties: schema.properties });
    expect(new Ajv().validate(schema, JSON.parse(g.choices[0]!.message.content!))).toBe(true);
    for (const stream of [false, true]) {
      let text = '';
      const params = { model: 'claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'Paris' }] };
      if (stream) {
        const s = await client.chat.completions.create({
          ...params,
          response_format: jsonSchemaFormat,
          stream,
        });
        for await (const c of s) text += c.choices[0]?.delta.content ?? '';
      } else {
        const a = await client.chat.completions.create({ ...params, response_format: jsonSchemaFormat });
        text = a.choices[0]!.message.content!;
      }
      // Natively (output_config.format) or, for older models, as the SDK's forced JSON tool.
      expect(JSON.stringify(lastBody(f.anthropic))).toContain('"population"');
      expect(JSON.parse(text)).toEqual({ city: 'Paris', population: 5 });
    }
  });

  it('json_object on Anthropic (which needs a schema) is refused with 400 naming the provider', async () => {
    const before = f.anthropic.requests.length;
    for (const stream of [false, true]) {
      const err = await client.chat.completions
        .create({
          model: 'claude-sonnet-4-5',
          messages: [{ role: 'user', content: 'x' }],
          response_format: { type: 'json_object' },
          stream,
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.error).toMatchObject({ code: 'MODEL_CAPABILITY_UNSUPPORTED' });
      expect(err.error.message).toContain("'anthropic'");
    }
    expect(f.anthropic.requests.length).toBe(before);
  });

  it('refuses a json_schema without its schema (400) rather than sending free text', async () => {
    const err = await client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x' } },
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
