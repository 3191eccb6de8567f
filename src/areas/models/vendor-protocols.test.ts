import OpenAI, { APIError } from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../../../test/fakes/anthropic-server.ts';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startGoogleServer } from '../../../test/fakes/google-server.ts';
import { startMistralServer } from '../../../test/fakes/mistral-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedApiKey, seedOrg } from '../../../test/seed.ts';

// What the other files show against OpenAI-compatible upstreams, against Anthropic's and Google's own
// protocols too, with the official openai client: fallbacks from a model failing in its vendor's own error
// shape (Anthropic's 529 overloaded_error and 429 rate_limit_error, Google's 503 UNAVAILABLE and 429
// RESOURCE_EXHAUSTED), budgets counting what those vendors report as usage and refusing the call that would
// pass them, audio input to Google, images refused by a model that cannot see them, and a conversation
// whose tool calls came from another vendor continued on Mistral (which takes only its own id shape), and
// tool_choice in each vendor's own terms.

// $0.01 per token either way, so a few tokens pass a budget of cents.
const CENT = { input: 10_000, output: 10_000 };
const PRICES = JSON.stringify({ 'anthropic/claude-sonnet-4-5': CENT, 'google/gemini-2.5-flash': CENT });

type Vendor = 'openai' | 'anthropic' | 'google' | 'mistral' | 'pier';
let t: TestApp;
let base: string;
let f: Record<Vendor, FakeServer>;

beforeAll(async () => {
  const [openai, anthropic, google, mistral, pier] = await Promise.all([
    startOpenAIServer('openai'),
    startAnthropicServer(),
    startGoogleServer(),
    startMistralServer(),
    startOpenAIServer('pier'),
  ]);
  f = { openai, anthropic, google, mistral, pier };
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
      MODEL_PRICES: PRICES,
    },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all(Object.values(f ?? {}).map((s) => s.close()));
});

async function tenant() {
  const { org, owner } = await seedOrg(t.deps);
  const key = await seedApiKey(t.deps, org.id, 'live');
  const client = new OpenAI({ apiKey: key.key, baseURL: `${base}/v1/ai`, maxRetries: 0 });
  return { org, owner, key, client };
}

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(APIError);
  const e = err as APIError;
  return { status: e.status ?? 0, code: String(e.code), message: e.message };
}

const ask: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris' }];
const lastBody = (s: FakeServer) => s.requests.at(-1)!.body as Record<string, unknown>;

describe("fallbacks from a model failing in its vendor's own error shape", () => {
  it.each([
    ['claude-unavailable', 'anthropic', 529, 'gemini-2.5-flash', 'google'],
    ['claude-ratelimited', 'anthropic', 429, 'gpt-4o-mini', 'openai'],
    ['gemini-unavailable', 'google', 503, 'claude-sonnet-4-5', 'anthropic'],
    ['gemini-ratelimited', 'google', 429, 'gpt-4o-mini', 'openai'],
  ] as const)(
    '%s (%s, HTTP %i) falls back to %s, named in the answer',
    async (failing, from, status, working, to) => {
      const { client } = await tenant();
      const before = f[from].requests.length;
      const raw = await client.chat.completions
        .create({ model: failing, messages: ask, ...{ models: [working] } })
        .withResponse();
      expect(raw.data.model).toBe(working);
      expect(raw.response.headers.get('x-pier-model')).toBe(`${to}/${working}`);
      expect(raw.data.choices[0]!.message.content).toBe(`${to} says: Paris`);
      expect(f[from].requests.length).toBeGreaterThan(before); // the failing vendor was asked (and retried)
      expect(status).toBeGreaterThanOrEqual(429);

      const stream = await client.chat.completions
        .create({ model: failing, messages: ask, stream: true, ...{ models: [working] } })
        .withResponse();
      expect(stream.response.headers.get('x-pier-model')).toBe(`${to}/${working}`);
      let text = '';
      for await (const c of stream.data) {
        expect(c.model).toBe(working);
        text += c.choices[0]?.delta.content ?? '';
      }
      expect(text).toBe(`${to} says: Paris`);
    },
  );

  it('answers the last failure in our envelope, naming its provider, when every model fails', async () => {
    const { client } = await tenant();
    const r = await refusal(
      client.chat.completions.create({
        model: 'claude-unavailable',
        messages: ask,
        ...{ models: ['gemini-ratelimited'] },
      }),
    );
    expect(r).toMatchObject({ status: 429, code: 'MODEL_PROVIDER_RATE_LIMITED' });
    expect(r.message).toContain("'google'");
  });
});

describe('budgets over Anthropic and Google usage', () => {
  it.each([
    ['claude-sonnet-4-5', 'anthropic'],
    ['gemini-2.5-flash', 'google'],
  ] as const)(
    "%s: the usage %s reports is spent; the key's next call is refused before the upstream",
    async (model, v) => {
      const { org, owner, key, client } = await tenant();
      await t.call(
        'setModelBudgetForCli',
        { orgSlug: org.slug, keyId: key.keyId, monthlyUsd: 0.03 },
        owner.token,
      );
      // Streamed, so the usage is the one the vendor's stream reports (message_delta, usageMetadata).
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let tokens = 0;
      for await (const c of stream) if (c.usage) tokens = c.usage.total_tokens;
      expect(tokens * 0.01).toBeGreaterThanOrEqual(0.03);
      const calls = f[v].requests.length;
      const r = await refusal(
        client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }),
      );
      expect(r).toMatchObject({ status: 402, code: 'BUDGET_EXCEEDED' });
      expect(r.message).toContain('$0.0300');
      expect(f[v].requests.length).toBe(calls);
      // Usage reaches the table within 200 ms (the proxy's write buffer); the budget counted it at once.
      const usageNow = async () =>
        (await t.call('getModelUsageForCli', { orgSlug: org.slug }, owner.token)).json();
      await expect.poll(async () => (await usageNow()).rows.length).toBe(1);
      const usage = await usageNow();
      expect(usage.rows).toMatchObject([{ keyId: key.keyId, model: `${v}/${model}`, totalTokens: tokens }]);
      expect(usage.rows[0].costUsd).toBeCloseTo(tokens * 0.01, 10);
    },
  );

  it("refuses the call whose worst case (max_tokens) would pass the organization's budget", async () => {
    const { org, owner, client } = await tenant();
    await t.call('setModelBudgetForCli', { orgSlug: org.slug, monthlyUsd: 1 }, owner.token);
    for (const [model, v] of [
      ['claude-sonnet-4-5', 'anthropic'],
      ['gemini-2.5-flash', 'google'],
    ] as const) {
      const calls = f[v].requests.length;
      // 200 output tokens at $0.01 = $2 > the $1 budget.
      const r = await refusal(client.chat.completions.create({ model, messages: ask, max_tokens: 200 }));
      expect(r).toMatchObject({ status: 402, code: 'BUDGET_EXCEEDED' });
      expect(r.message).toContain('lower max_tokens');
      expect(f[v].requests.length).toBe(calls);
      await client.chat.completions.create({ model, messages: ask, max_tokens: 20 });
      expect(f[v].requests.length).toBe(calls + 1);
    }
  });
});

describe('media the model or its provider cannot take', () => {
  it('sends input_audio to Google as inlineData and to the pier server as input_audio', async () => {
    const { client } = await tenant();
    const wav = Buffer.from('RIFF fake wav').toString('base64');
    const withAudio = (model: string) =>
      client.chat.completions.create({
        model,
        messages: [
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: wav, format: 'wav' } }] },
        ],
      });
    await withAudio('gemini-2.5-flash');
    expect(JSON.stringify(lastBody(f.google))).toContain(
      `"inlineData":{"mimeType":"audio/wav","data":"${wav}"`,
    );
    await withAudio('pier/qwen2-audio');
    expect(JSON.stringify(lastBody(f.pier))).toContain(
      `"type":"input_audio","input_audio":{"data":"${wav}","format":"wav"}`,
    );
  });

  it('refuses audio for Mistral naming it, and an image to a text-only model with the provider named', async () => {
    const { client } = await tenant();
    const audio = await refusal(
      client.chat.completions.create({
        model: 'mistral-small-latest',
        messages: [
          {
            role: 'user',
            content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }],
          },
        ],
      }),
    );
    expect(audio).toMatchObject({ status: 400, code: 'MODEL_CAPABILITY_UNSUPPORTED' });
    expect(audio.message).toContain("'mistral'");
    const PNG =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    for (const [model, provider] of [
      ['gpt-text-only', 'openai'],
      ['pier/text-only-llm', 'pier'],
    ]) {
      const image = await refusal(
        client.chat.completions.create({
          model: model!,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is this?' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
              ],
            },
          ],
        }),
      );
      expect(image).toMatchObject({ status: 400, code: 'MODEL_PROVIDER_REJECTED' });
      expect(image.message).toContain(`'${provider}'`);
      expect(image.message).toContain('image_url is only supported by certain models');
    }
  });
});

const weather: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('Mistral tool translation', () => {
  it.each([
    ['gpt-4o-mini', 'call_fake_1'],
    ['claude-sonnet-4-5', 'toolu_fake_1'],
  ])(
    'continues a conversation whose tool call %s made on Mistral, rewriting only the ids Mistral sees',
    async (first, id) => {
      const { client } = await tenant();
      const called = await client.chat.completions.create({ model: first, messages: ask, tools: [weather] });
      const call = called.choices[0]!.message.tool_calls![0]!;
      expect(call.id).toBe(id);
      const answer = await client.chat.completions.create({
        model: 'mistral-small-latest',
        tools: [weather],
        messages: [
          ...ask,
          called.choices[0]!.message,
          { role: 'tool', tool_call_id: call.id, content: 'sunny' },
        ],
      });
      expect(answer.choices[0]!.message.content).toBe('mistral says: the tool said sunny');
      const sent = lastBody(f.mistral).messages as { tool_calls?: { id: string }[]; tool_call_id?: string }[];
      const sentId = sent.find((m) => m.tool_calls)!.tool_calls![0]!.id;
      expect(sentId).toMatch(/^[a-zA-Z0-9]{9}$/);
      expect(sent.find((m) => m.tool_call_id)!.tool_call_id).toBe(sentId);
    },
  );

  it("keeps Mistral's own ids: its calls come back and go out as Mistral wrote them", async () => {
    const { client } = await tenant();
    const called = await client.chat.completions.create({
      model: 'mistral-small-latest',
      messages: ask,
      tools: [weather],
    });
    const call = called.choices[0]!.message.tool_calls![0]!;
    expect(call.id).toBe('callfake1');
    await client.chat.completions.create({
      model: 'mistral-small-latest',
      tools: [weather],
      messages: [...ask, called.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'x' }],
    });
    const sent = lastBody(f.mistral).messages as { tool_call_id?: string }[];
    expect(sent.find((m) => m.tool_call_id)!.tool_call_id).toBe('callfake1');
  });
});

describe('tool_choice in each vendor’s terms', () => {
  it('required and a named tool reach Anthropic, Google and Mistral as their own settings', async () => {
    const { client } = await tenant();
    const named = { type: 'function' as const, function: { name: 'get_weather' } };
    const send = (model: string, tool_choice: 'required' | 'none' | typeof named) =>
      client.chat.completions.create({ model, messages: ask, tools: [weather], tool_choice });
    await send('claude-sonnet-4-5', 'required');
    expect(lastBody(f.anthropic).tool_choice).toMatchObject({ type: 'any' });
    await send('claude-sonnet-4-5', named);
    expect(lastBody(f.anthropic).tool_choice).toMatchObject({ type: 'tool', name: 'get_weather' });
    await send('gemini-2.5-flash', 'required');
    expect(lastBody(f.google).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    await send('gemini-2.5-flash', named);
    expect(lastBody(f.google).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    });
    await send('mistral-small-latest', 'required');
    expect(lastBody(f.mistral).tool_choice).toBe('any');
  });
});
