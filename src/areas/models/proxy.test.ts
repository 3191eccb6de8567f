import { and, eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../../../test/fakes/anthropic-server.ts';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startGoogleServer } from '../../../test/fakes/google-server.ts';
import { startMistralServer } from '../../../test/fakes/mistral-server.ts';
import { EMBED_DIM, startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedApiKey, seedOrg, seedPlatform } from '../../../test/seed.ts';
import { loadConfig } from '../../config.ts';
import { embedLocal } from '../../core/ai/local-embedder.ts';
import { credentials } from '../../core/auth/tables.ts';
import { createLogger } from '../../create-deps.ts';
import { modelUsage } from './tables.ts';

// The model proxy end to end: the official openai client → Pier (listening) → a local vendor server.

const KEYS = {
  openai: 'sk-platform-openai-SECRET1',
  anthropic: 'sk-ant-platform-SECRET2',
  google: 'g-platform-SECRET3',
  mistral: 'm-platform-SECRET4',
};

let t: TestApp;
let base: string;
let fakes: Record<'openai' | 'anthropic' | 'google' | 'mistral', FakeServer>;
const logs: string[] = [];

beforeAll(async () => {
  const [openai, anthropic, google, mistral] = await Promise.all([
    startOpenAIServer(),
    startAnthropicServer(),
    startGoogleServer(),
    startMistralServer(),
  ]);
  fakes = { openai, anthropic, google, mistral };
  const env = {
    OPENAI_API_KEY: KEYS.openai,
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: KEYS.anthropic,
    ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
    GOOGLE_API_KEY: KEYS.google,
    GOOGLE_BASE_URL: `${google.url}/v1beta`,
    MISTRAL_API_KEY: KEYS.mistral,
    MISTRAL_BASE_URL: `${mistral.url}/v1`,
    MODEL_RETRY_BASE_MS: '5',
  };
  const log = createLogger(loadConfig({ LOG_LEVEL: 'debug' }), { write: (s: string) => void logs.push(s) });
  t = await testApp({ env, log });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all(Object.values(fakes ?? {}).map((f) => f.close()));
});

async function tenant(kind: 'live' | 'test' = 'live') {
  const { org, owner } = await seedOrg(t.deps);
  const key = await seedApiKey(t.deps, org.id, kind);
  const client = new OpenAI({ apiKey: key.key, baseURL: `${base}/v1/ai`, maxRetries: 0 });
  return { org, owner, key, client };
}

const usageOf = (orgId: string) => t.deps.db.orm.select().from(modelUsage).where(eq(modelUsage.orgId, orgId));

describe('authentication', () => {
  it('needs a v1 API key: 401 without a credential, 403 for personal tokens and platform credentials', async () => {
    const { owner } = await tenant();
    const plat = await seedPlatform(t.deps, ['model.resolve']);
    const post = (auth?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/ai/chat/completions',
        headers: auth ? { authorization: `Bearer ${auth}` } : {},
        payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      });
    const none = await post();
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('AUTH_REQUIRED');
    expect((await post('sk_live.nope.nope')).statusCode).toBe(401);
    for (const token of [owner.token, plat.token]) {
      const res = await post(token);
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('FORBIDDEN');
    }
  });
});

describe('chat completions through the official openai client', () => {
  it('answers a chat completion with the platform key and records token usage', async () => {
    const { org, client } = await tenant();
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello proxy' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('openai says: hello proxy');
    expect(res.model).toBe('gpt-4o-mini');
    expect(res.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
    expect(fakes.openai.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEYS.openai}`);
    await expect
      .poll(async () => (await usageOf(org.id))[0])
      .toMatchObject({
        environment: 'production',
        model: 'openai/gpt-4o-mini',
        requests: 1,
        totalTokens: 8,
      });
  });

  it.each([
    ['claude-sonnet-4-5', 'anthropic'],
    ['gemini-2.5-flash', 'google'],
    ['mistral-small-latest', 'mistral'],
    ['gpt-4o', 'openai'],
  ])('streams %s as OpenAI SSE chunks with usage', async (model, vendor) => {
    const { org, client } = await tenant('test');
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'stream this please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let chunks = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      chunks++;
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe(`${vendor} says: stream this please`);
    expect(chunks).toBeGreaterThan(3);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(5);
    // usage is written as the stream finishes
    await expect
      .poll(async () => (await usageOf(org.id))[0])
      .toMatchObject({
        environment: 'sandbox',
        model: `${vendor}/${model}`,
        requests: 1,
        completionTokens: 5,
      });
  });

  it("uses the organization's own key over the platform's", async () => {
    const { org, owner, client } = await tenant();
    await t.call(
      'setModelProviderKeyForCli',
      { orgSlug: org.slug, provider: 'anthropic', apiKey: 'sk-ant-org-OWNKEY' },
      owner.token,
    );
    await client.chat.completions.create({
      model: 'claude-3-5-haiku-latest',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(fakes.anthropic.requests.at(-1)!.headers['x-api-key']).toBe('sk-ant-org-OWNKEY');
  });

  it('answers MODEL_NOT_AVAILABLE for a model nobody serves', async () => {
    const { client } = await tenant();
    const err = await client.chat.completions
      .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.error).toMatchObject({ code: 'MODEL_NOT_AVAILABLE' });
  });

  it('rejects bad input with a 400, not a 500', async () => {
    const { key } = await tenant();
    for (const payload of [
      { model: 'gpt-4o' },
      { model: 'gpt-4o', messages: [{ role: 'wizard', content: 'x' }] },
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/ai/chat/completions',
        headers: { authorization: `Bearer ${key.key}` },
        payload,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('provider failures through the proxy', () => {
  it('retries a provider 503 and answers', async () => {
    const { client } = await tenant();
    fakes.mistral.failNext(503);
    const res = await client.chat.completions.create({
      model: 'mistral-large-latest',
      messages: [{ role: 'user', content: 'ok' }],
    });
    expect(res.choices[0]!.message.content).toBe('mistral says: ok');
  });

  it('surfaces a persistent 429 as a 429 with retry-after, and a 5xx as a 502, in our envelope', async () => {
    const { client, key } = await tenant();
    fakes.openai.failNext(429, 3, { 'retry-after': '2' });
    const limited = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.error).toMatchObject({ code: 'MODEL_PROVIDER_RATE_LIMITED' });
    fakes.google.failNext(500, 3);
    const failed = await t.app.inject({
      method: 'POST',
      url: '/v1/ai/chat/completions',
      headers: { authorization: `Bearer ${key.key}` },
      payload: { model: 'gemini-2.5-pro', stream: true, messages: [{ role: 'user', content: 'x' }] },
    });
    expect(failed.statusCode).toBe(502);
    expect(failed.json().error.code).toBe('MODEL_PROVIDER_ERROR');
  });
});

describe('a failure inside a started stream', () => {
  it('ends the SSE stream with an error event in our envelope and no [DONE]', async () => {
    const { key } = await tenant();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/ai/chat/completions',
      headers: { authorization: `Bearer ${key.key}` },
      payload: {
        model: 'openai/gpt-broken-stream',
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    const events = res.body
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(JSON.parse(events[1]!).choices[0].delta.content).toBe('openai ');
    expect(JSON.parse(events.at(-1)!)).toMatchObject({ error: { code: 'MODEL_PROVIDER_ERROR' } });
    expect(res.body).not.toContain('[DONE]');
  });
});

describe('embeddings', () => {
  it('serves embeddings to the openai client (base64 by default) and as floats', async () => {
    const { org, client, key } = await tenant();
    const res = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['alpha beta', 'gamma'],
    });
    expect(res.data).toHaveLength(2);
    expect(res.data[0]!.embedding).toHaveLength(EMBED_DIM);
    const want = Array.from(embedLocal('alpha beta', EMBED_DIM));
    for (const [i, x] of res.data[0]!.embedding.entries()) expect(x).toBeCloseTo(want[i]!, 5);
    const floats = await t.app.inject({
      method: 'POST',
      url: '/v1/ai/embeddings',
      headers: { authorization: `Bearer ${key.key}` },
      payload: { model: 'mistral/mistral-embed', input: 'gamma', encoding_format: 'float' },
    });
    expect(floats.json()).toMatchObject({
      object: 'list',
      model: 'mistral/mistral-embed',
      data: [{ index: 0 }],
    });
    expect(floats.json().data[0].embedding).toHaveLength(EMBED_DIM);
    const local = await client.embeddings.create({ model: 'pier-local/hash-384-v1', input: 'offline' });
    expect(local.data[0]!.embedding).toHaveLength(384);
    await expect
      .poll(async () => (await usageOf(org.id)).map((r) => r.model).sort())
      .toEqual(['mistral/mistral-embed', 'openai/text-embedding-3-small', 'pier-local/hash-384-v1']);
  });
});

describe('the proxy credential and secrecy', () => {
  it('resolves with its own model.resolve credential, and mints a new one when it is revoked', async () => {
    const { client } = await tenant();
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }] });
    const live = () =>
      t.deps.db.orm
        .select()
        .from(credentials)
        .where(and(eq(credentials.kind, 'plat'), eq(credentials.label, 'model proxy')));
    const [cred] = await live();
    expect(cred!.scopes).toEqual(['model.resolve']);
    await t.deps.credentials.revoke(cred!.id);
    // another model, so the proxy's short resolution cache does not answer
    await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'b' }] });
    const all = await live();
    expect(all.filter((c) => !c.revokedAt)).toHaveLength(1);
  });

  it('never writes a provider key to the logs', () => {
    const text = logs.join('');
    expect(text.length).toBeGreaterThan(1000);
    for (const k of [...Object.values(KEYS), 'sk-ant-org-OWNKEY']) expect(text).not.toContain(k);
  });
});
