import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedApiKey, seedMember, seedOrg } from '../../../test/seed.ts';
import { loadConfig } from '../../config.ts';
import type { ManualClock } from '../../core/clock.ts';
import { globMatch } from './budgets.ts';
import { recordModelUsage } from './model-usage.ts';
import { PriceList } from './prices.ts';

// Spend, budgets and allow-lists through the official openai client against local OpenAI-compatible
// upstreams: what each key and model cost, a budget refusing the call that would pass it, and an allow-list.

// $0.01 per token either way for gpt-4o-mini, so costs are easy to read; other models keep the built-in table.
const PRICES = JSON.stringify({ 'openai/gpt-4o-mini': { input: 10_000, output: 10_000 } });

let t: TestApp;
let base: string;
let openai: FakeServer;
let pier: FakeServer;

beforeAll(async () => {
  [openai, pier] = await Promise.all([startOpenAIServer('openai'), startOpenAIServer('pier')]);
  t = await testApp({
    env: {
      OPENAI_API_KEY: 'sk-platform-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      PIER_MODELS_URL: `${pier.url}/v1`,
      MODEL_RETRY_BASE_MS: '5',
      MODEL_PRICES: PRICES,
    },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([openai?.close(), pier?.close()]);
});

const clientOf = (key: string) => new OpenAI({ apiKey: key, baseURL: `${base}/v1/ai`, maxRetries: 0 });
const ask = (c: OpenAI, model = 'gpt-4o-mini', extra: { max_tokens?: number } = {}) =>
  c.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(APIError);
  const e = err as APIError;
  return { status: e.status ?? 0, code: String(e.code), message: e.message };
}

async function tenant() {
  const { org, owner } = await seedOrg(t.deps);
  const a = await seedApiKey(t.deps, org.id, 'live');
  const b = await seedApiKey(t.deps, org.id, 'test');
  return { org, owner, a, b };
}

type Usage = {
  rows: {
    keyId: string;
    model: string;
    environment: string;
    requests: number;
    totalTokens: number;
    costUsd: number | null;
  }[];
  totals: { requests: number; costUsd: number | null };
};
const usageOf = async (orgSlug: string, token: string) =>
  (await t.call('getModelUsageForCli', { orgSlug }, token)).json() as Usage;

describe('spend per key and model', () => {
  it('records every call with its key, model and cost; an unpriced model keeps its usage with cost null', async () => {
    const { org, owner, a, b } = await tenant();
    const ca = clientOf(a.key);
    const one = await ask(ca);
    const stream = await ca.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello there' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let streamed = 0;
    for await (const chunk of stream) if (chunk.usage) streamed = chunk.usage.total_tokens;
    const cb = clientOf(b.key);
    await ask(cb, 'pier/llama3.2');
    const emb = await cb.embeddings.create({ model: 'text-embedding-3-small', input: ['one two three'] });

    const tokens = one.usage!.total_tokens + streamed;
    await expect
      .poll(async () => (await usageOf(org.slug, owner.token)).totals.requests, { timeout: 5000 })
      .toBe(4);
    const usage = await usageOf(org.slug, owner.token);
    const row = (keyId: string, model: string) =>
      usage.rows.find((r) => r.keyId === keyId && r.model === model);
    expect(row(a.keyId, 'openai/gpt-4o-mini')).toMatchObject({
      environment: 'production',
      requests: 2,
      totalTokens: tokens,
    });
    expect(row(a.keyId, 'openai/gpt-4o-mini')!.costUsd).toBeCloseTo(tokens * 0.01, 10);
    // pier/ has no built-in price: usage recorded, cost unknown.
    expect(row(b.keyId, 'pier/llama3.2')).toMatchObject({
      environment: 'sandbox',
      requests: 1,
      costUsd: null,
    });
    // Embeddings at the built-in price ($0.02 per 1M tokens).
    expect(row(b.keyId, 'openai/text-embedding-3-small')!.costUsd).toBeCloseTo(
      (emb.usage.prompt_tokens * 0.02) / 1e6,
      12,
    );
    expect(usage.totals.costUsd).toBeCloseTo(tokens * 0.01 + (emb.usage.prompt_tokens * 0.02) / 1e6, 10);

    const limits = (await t.call('getModelLimitsForCli', { orgSlug: org.slug }, owner.token)).json();
    expect(limits.period).toBe('month');
    expect(limits.keys.find((k: { keyId: string }) => k.keyId === a.keyId).spentUsd).toBeCloseTo(
      tokens * 0.01,
      10,
    );
  });
});

describe('budgets', () => {
  it("refuses the call after the key's monthly budget is spent, before the upstream, until next month", async () => {
    const { org, owner, a, b } = await tenant();
    const set = await t.call(
      'setModelBudgetForCli',
      { orgSlug: org.slug, keyId: a.keyId, monthlyUsd: 0.03 },
      owner.token,
    );
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ keyId: a.keyId, monthlyBudgetUsd: 0.03, spentUsd: 0 });
    const ca = clientOf(a.key);
    const first = await ask(ca); // allowed: nothing spent yet; costs ≥ $0.03
    expect(first.usage!.total_tokens * 0.01).toBeGreaterThanOrEqual(0.03);
    const calls = openai.requests.length;
    const r = await refusal(ask(ca));
    expect(r).toMatchObject({ status: 402, code: 'BUDGET_EXCEEDED' });
    expect(r.message).toContain('monthly model budget of $0.0300 is spent');
    expect(openai.requests.length).toBe(calls);
    // Streams and embeddings are refused the same way; another key of the organization is not limited.
    expect(
      await refusal(
        ca.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'x' }],
          stream: true,
        }),
      ),
    ).toMatchObject({ status: 402 });
    expect(
      await refusal(ca.embeddings.create({ model: 'text-embedding-3-small', input: 'x' })),
    ).toMatchObject({ status: 402 });
    await ask(clientOf(b.key));
    expect(openai.requests.length).toBe(calls + 1);
    // A new calendar month (UTC) starts a new budget period.
    const clock = t.clock as ManualClock;
    const now = clock.now();
    clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1));
    try {
      await ask(ca);
    } finally {
      clock.set(now);
    }
  });

  it('counts spend another proxy node wrote, within a second', async () => {
    const { org, owner, a } = await tenant();
    await t.call('setModelBudgetForCli', { orgSlug: org.slug, keyId: a.keyId, monthlyUsd: 1 }, owner.token);
    const ca = clientOf(a.key);
    await ask(ca);
    // Another node's usage of this key lands in the database directly.
    await recordModelUsage(t.deps, {
      orgId: org.id,
      environment: 'production',
      keyId: a.keyId,
      model: 'openai/gpt-4o-mini',
      usage: { promptTokens: 100, completionTokens: 0, totalTokens: 100 },
      costUsd: 5,
    });
    await expect
      .poll(async () => (await refusal(ask(ca)).catch(() => ({ code: 'allowed' }))).code, {
        timeout: 3000,
        interval: 300,
      })
      .toBe('BUDGET_EXCEEDED');
  });

  it('with max_tokens, refuses a call whose worst case would pass the budget', async () => {
    const { org, owner, a } = await tenant();
    await t.call('setModelBudgetForCli', { orgSlug: org.slug, keyId: a.keyId, monthlyUsd: 1 }, owner.token);
    const ca = clientOf(a.key);
    // 200 output tokens at $0.01 = $2 > $1 left.
    const r = await refusal(ask(ca, 'gpt-4o-mini', { max_tokens: 200 }));
    expect(r).toMatchObject({ status: 402, code: 'BUDGET_EXCEEDED' });
    expect(r.message).toContain('lower max_tokens');
    await ask(ca, 'gpt-4o-mini', { max_tokens: 50 });
  });

  it("the organization's budget covers all its keys; 0 blocks every call", async () => {
    const { org, owner, a, b } = await tenant();
    await t.call('setModelBudgetForCli', { orgSlug: org.slug, monthlyUsd: 0 }, owner.token);
    for (const k of [a, b])
      expect(await refusal(ask(clientOf(k.key)))).toMatchObject({ status: 402, code: 'BUDGET_EXCEEDED' });
    const cleared = await t.call(
      'setModelBudgetForCli',
      { orgSlug: org.slug, monthlyUsd: null },
      owner.token,
    );
    expect(cleared.json()).toMatchObject({ keyId: null, monthlyBudgetUsd: null });
    await ask(clientOf(a.key));
  });
});

describe('allow-lists', () => {
  it('a key calls only the models its list names (names or globs); others answer 403 before the upstream', async () => {
    const { org, owner, a, b } = await tenant();
    const set = await t.call(
      'setModelAllowListForCli',
      { orgSlug: org.slug, keyId: a.keyId, models: ['gpt-4o-mini', 'pier/llama*'] },
      owner.token,
    );
    expect(set.json()).toEqual({ keyId: a.keyId, allowedModels: ['gpt-4o-mini', 'pier/llama*'] });
    const ca = clientOf(a.key);
    await ask(ca, 'gpt-4o-mini');
    await ask(ca, 'openai/gpt-4o-mini');
    await ask(ca, 'pier/llama3.2');
    const calls = openai.requests.length + pier.requests.length;
    expect(await refusal(ask(ca, 'gpt-4o'))).toMatchObject({ status: 403, code: 'MODEL_NOT_ALLOWED' });
    expect(
      await refusal(ca.embeddings.create({ model: 'text-embedding-3-small', input: 'x' })),
    ).toMatchObject({ status: 403, code: 'MODEL_NOT_ALLOWED' });
    expect(openai.requests.length + pier.requests.length).toBe(calls);
    await ask(clientOf(b.key), 'gpt-4o'); // the other key has no list
    await t.call('setModelAllowListForCli', { orgSlug: org.slug, keyId: a.keyId, models: null }, owner.token);
    await ask(ca, 'gpt-4o');
  });
});

describe('the Responses API and fallbacks', () => {
  it('responses are recorded per key and refused by a budget; a fallback list is checked model by model', async () => {
    const { org, owner, a } = await tenant();
    const ca = clientOf(a.key);
    const res = await ca.responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    await expect
      .poll(
        async () => (await usageOf(org.slug, owner.token)).rows.find((r) => r.keyId === a.keyId)?.requests,
      )
      .toBe(1);
    const row = (await usageOf(org.slug, owner.token)).rows.find((r) => r.keyId === a.keyId)!;
    expect(row.costUsd).toBeCloseTo(res.usage!.total_tokens * 0.01, 10);

    // A model outside the allow-list is refused even with an allowed fallback after it: no silent switch.
    await t.call(
      'setModelAllowListForCli',
      { orgSlug: org.slug, keyId: a.keyId, models: ['pier/*'] },
      owner.token,
    );
    const calls = openai.requests.length + pier.requests.length;
    const listed = ca.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      // @ts-expect-error OpenRouter's extension of the request
      models: ['pier/llama3.2'],
    });
    expect(await refusal(listed)).toMatchObject({ status: 403, code: 'MODEL_NOT_ALLOWED' });
    expect(openai.requests.length + pier.requests.length).toBe(calls);

    await t.call('setModelBudgetForCli', { orgSlug: org.slug, keyId: a.keyId, monthlyUsd: 0 }, owner.token);
    expect(await refusal(ca.responses.create({ model: 'pier/llama3.2', input: 'hi' }))).toMatchObject({
      status: 402,
      code: 'BUDGET_EXCEEDED',
    });
  });
});

describe('GET /v1/ai/key', () => {
  it("tells a key its budget, this month's spend and allowed models, and its organization's", async () => {
    const { org, owner, a, b } = await tenant();
    await t.call('setModelBudgetForCli', { orgSlug: org.slug, keyId: a.keyId, monthlyUsd: 100 }, owner.token);
    await t.call('setModelBudgetForCli', { orgSlug: org.slug, monthlyUsd: 500 }, owner.token);
    await t.call(
      'setModelAllowListForCli',
      { orgSlug: org.slug, keyId: a.keyId, models: ['gpt-4o-*'] },
      owner.token,
    );
    const res = await ask(clientOf(a.key));
    const cost = res.usage!.total_tokens * 0.01;
    const own = await t.v1('GET', '/ai/key', a.key);
    expect(own.statusCode).toBe(200);
    const body = own.json();
    expect(body).toMatchObject({
      keyId: a.keyId,
      period: 'month',
      key: { monthlyBudgetUsd: 100, allowedModels: ['gpt-4o-*'] },
      organization: { monthlyBudgetUsd: 500 },
    });
    expect(body.key.spentUsd).toBeCloseTo(cost, 10);
    expect(body.organization.spentUsd).toBeCloseTo(cost, 10);
    // The other key of the organization: its own (no) limits, the organization's spend.
    const other = (await t.v1('GET', '/ai/key', b.key)).json();
    expect(other).toMatchObject({
      keyId: b.keyId,
      key: { monthlyBudgetUsd: null, spentUsd: 0, allowedModels: null },
    });
    expect(other.organization.spentUsd).toBeCloseTo(cost, 10);
    expect((await t.v1('GET', '/ai/key')).statusCode).toBe(401);

    const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json();
    expect(doc.paths['/v1/ai/key'].get.operationId).toBe('ai.getKey');
    const chat = doc.paths['/v1/ai/chat/completions'].post;
    expect(chat.responses).toHaveProperty('402');
    expect(chat.description).toContain('BUDGET_EXCEEDED');
    expect(chat.description).toContain('MODEL_NOT_ALLOWED');
  });
});

describe('management', () => {
  it("another organization's key or organization answers 404; members cannot set; bad input is 400", async () => {
    const mine = await tenant();
    const other = await tenant();
    const budgetOther = await t.call(
      'setModelBudgetForCli',
      { orgSlug: mine.org.slug, keyId: other.a.keyId, monthlyUsd: 5 },
      mine.owner.token,
    );
    expect(budgetOther.statusCode).toBe(404);
    expect(budgetOther.json().error.code).toBe('API_KEY_NOT_FOUND');
    const listOther = await t.call(
      'setModelAllowListForCli',
      { orgSlug: mine.org.slug, keyId: other.a.keyId, models: ['x'] },
      mine.owner.token,
    );
    expect(listOther.statusCode).toBe(404);
    const readOther = await t.call('getModelLimitsForCli', { orgSlug: other.org.slug }, mine.owner.token);
    expect(readOther.statusCode).toBe(404);
    expect(readOther.json().error.code).toBe('ORG_NOT_FOUND');
    const setOther = await t.call(
      'setModelBudgetForCli',
      { orgSlug: other.org.slug, monthlyUsd: 5 },
      mine.owner.token,
    );
    expect(setOther.statusCode).toBe(404);
    expect(
      (await t.call('getModelLimitsForCli', { orgSlug: other.org.slug }, other.owner.token)).json()
        .organization.monthlyBudgetUsd,
    ).toBeNull();

    const member = await seedMember(t.deps, mine.org.id, 'member');
    const byMember = await t.call(
      'setModelBudgetForCli',
      { orgSlug: mine.org.slug, monthlyUsd: 5 },
      member.token,
    );
    expect(byMember.statusCode).toBe(403);

    for (const body of [
      { orgSlug: mine.org.slug, monthlyUsd: -1 },
      { orgSlug: mine.org.slug, monthlyUsd: 'ten' },
      { orgSlug: mine.org.slug, keyId: mine.a.keyId },
    ]) {
      const res = await t.call('setModelBudgetForCli', body, mine.owner.token);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
    const badPattern = await t.call(
      'setModelAllowListForCli',
      { orgSlug: mine.org.slug, keyId: mine.a.keyId, models: ['gpt 4o'] },
      mine.owner.token,
    );
    expect(badPattern.statusCode).toBe(400);
    const unknown = await t.call(
      'setModelBudgetForCli',
      { orgSlug: mine.org.slug, keyId: 'nosuchkey', monthlyUsd: 5 },
      mine.owner.token,
    );
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('API_KEY_NOT_FOUND');
  });
});

describe('prices', () => {
  it('takes the longest matching prefix, overrides first; unknown models have no price', () => {
    const p = new PriceList({ 'openai/gpt-4o': { input: 1, output: 2 } });
    expect(p.priceOf('openai/gpt-4o-2024-08-06')).toEqual({ input: 1, output: 2 });
    expect(p.priceOf('openai/gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(p.priceOf('pier/llama3.2')).toBeNull();
    expect(
      p.costOf('anthropic/claude-sonnet-4-5', { promptTokens: 1_000_000, completionTokens: 1_000_000 }),
    ).toBe(18);
    expect(p.costOf('pier-local/hash-384-v1', { promptTokens: 10, completionTokens: 0 })).toBe(0);
  });

  it('globs: * spans any characters, the rest is literal', () => {
    expect(globMatch('anthropic/*', 'anthropic/claude-sonnet-4-5')).toBe(true);
    expect(globMatch('gpt-4o*', 'gpt-4o-mini')).toBe(true);
    expect(globMatch('gpt-4o', 'gpt-4o-mini')).toBe(false);
    expect(globMatch('gpt-4.1', 'gpt-401')).toBe(false);
  });

  it('MODEL_PRICES and MODEL_PRICES_FILE are checked at start-up', () => {
    expect(() => loadConfig({ MODEL_PRICES: '{nope' })).toThrow(/MODEL_PRICES: not JSON/);
    expect(() => loadConfig({ MODEL_PRICES: '{"gpt-4o": {"input": 1, "output": 1}}' })).toThrow(
      /<provider>\/<model>/,
    );
    expect(() => loadConfig({ MODEL_PRICES_FILE: '/nonexistent/prices.json' })).toThrow(/cannot read/);
    const ok = loadConfig({ MODEL_PRICES: '{"pier/llama3.2": {"input": 0.5, "output": 1}}' });
    expect(ok.models.prices).toEqual({ 'pier/llama3.2': { input: 0.5, output: 1 } });
  });
});
