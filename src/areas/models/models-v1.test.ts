import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../../../test/fakes/anthropic-server.ts';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startGoogleServer } from '../../../test/fakes/google-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedApiKey, seedOrg } from '../../../test/seed.ts';

// GET /v1/ai/models through the official openai client: the platform's OpenAI, Anthropic and Google keys,
// the operator's `pier` server, and an organization's own key. Mistral has no key here, so it lists nothing.

let t: TestApp;
let base: string;
let fakes: FakeServer[];

beforeAll(async () => {
  const [openai, pier, anthropic, google] = await Promise.all([
    startOpenAIServer('openai'),
    startOpenAIServer('pier'),
    startAnthropicServer(),
    startGoogleServer(),
  ]);
  fakes = [openai, pier, anthropic, google];
  t = await testApp({
    env: {
      OPENAI_API_KEY: 'sk-platform-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-ant-platform',
      ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
      GOOGLE_API_KEY: 'g-platform',
      GOOGLE_BASE_URL: `${google.url}/v1beta`,
      PIER_MODELS_URL: `${pier.url}/v1`,
      MODEL_RETRY_BASE_MS: '5',
    },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all((fakes ?? []).map((f) => f.close()));
});

async function tenant() {
  const { org, owner } = await seedOrg(t.deps);
  const key = await seedApiKey(t.deps, org.id, 'live');
  const client = new OpenAI({ apiKey: key.key, baseURL: `${base}/v1/ai`, maxRetries: 0 });
  return { org, owner, client };
}

describe('GET /v1/ai/models', () => {
  it("lists every provider's models the organization can use, and its own key's models to it alone", async () => {
    const a = await tenant();
    const b = await tenant();
    await t.call(
      'setModelProviderKeyForCli',
      { orgSlug: a.org.slug, provider: 'openai', apiKey: 'sk-org-A-own-key' },
      a.owner.token,
    );
    const ids = async (c: OpenAI) => {
      const out: string[] = [];
      for await (const m of c.models.list()) {
        expect(m).toMatchObject({ object: 'model', owned_by: m.id.split('/')[0] });
        expect(typeof m.created).toBe('number');
        out.push(m.id);
      }
      return out.sort();
    };
    const common = [
      'anthropic/claude-sonnet-4-5',
      'google/gemini-2.5-flash',
      'openai/dall-e-3',
      'openai/gpt-4o-mini',
      'openai/text-embedding-3-small',
      'openai/tts-1',
      'pier/llama3.2',
      'pier/nomic-embed-text',
    ];
    expect(await ids(b.client)).toEqual(common);
    expect(await ids(a.client)).toEqual([...common, 'openai/ft:openai-own'].sort());
    // A listed id is what a completion accepts.
    const res = await b.client.chat.completions.create({
      model: 'pier/llama3.2',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.choices[0]!.message.content).toContain('hi');
  });

  it('retrieves one model by its id or bare name; another organization’s model and unknown ids are 404', async () => {
    const a = await tenant();
    const b = await tenant();
    await t.call(
      'setModelProviderKeyForCli',
      { orgSlug: a.org.slug, provider: 'openai', apiKey: 'sk-org-A-own-key2' },
      a.owner.token,
    );
    expect(await b.client.models.retrieve('anthropic/claude-sonnet-4-5')).toEqual({
      id: 'anthropic/claude-sonnet-4-5',
      object: 'model',
      created: Math.floor(Date.parse('2025-09-29T00:00:00Z') / 1000),
      owned_by: 'anthropic',
    });
    expect((await b.client.models.retrieve('gpt-4o-mini')).id).toBe('openai/gpt-4o-mini');
    expect((await a.client.models.retrieve('openai/ft:openai-own')).owned_by).toBe('openai');
    for (const id of ['openai/ft:openai-own', 'gpt-nonexistent', 'mistral/mistral-small-latest']) {
      const err = await b.client.models.retrieve(id).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect(err.error).toMatchObject({ code: 'MODEL_NOT_FOUND' });
    }
  });

  it('lists only the models a key with an allow-list may call; another key of the organization sees all', async () => {
    const a = await tenant();
    const limited = await seedApiKey(t.deps, a.org.id, 'live');
    const set = await t.call(
      'setModelAllowListForCli',
      { orgSlug: a.org.slug, keyId: limited.keyId, models: ['anthropic/*', 'gpt-4o-mini'] },
      a.owner.token,
    );
    expect(set.statusCode).toBe(200);
    const client = new OpenAI({ apiKey: limited.key, baseURL: `${base}/v1/ai`, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual(['anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini']);
    expect((await client.models.retrieve('gpt-4o-mini')).id).toBe('openai/gpt-4o-mini');
    const err = await client.models.retrieve('pier/llama3.2').catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    let all = 0;
    for await (const _ of a.client.models.list()) all++;
    expect(all).toBe(8);
  });

  it('needs a v1 API key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/ai/models' });
    expect(res.statusCode).toBe(401);
  });
});
