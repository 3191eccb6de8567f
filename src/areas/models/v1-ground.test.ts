import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { ManualClock } from '../../core/clock.ts';

// The v1 common ground on the model proxy: the key's rate-limit bucket, Idempotency-Key, the error envelope
// and the OpenAPI document, as for every other /v1 route.

let t: TestApp;
let base: string;
let openai: FakeServer;

beforeAll(async () => {
  openai = await startOpenAIServer();
  t = await testApp({
    env: {
      OPENAI_API_KEY: 'sk-platform-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      MODEL_RETRY_BASE_MS: '5',
      V1_RATE_LIMIT_BURST: '5',
      V1_RATE_LIMIT_PER_SEC: '1',
    },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await openai?.close();
});

const chat = (key: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/ai/chat/completions',
    headers: { authorization: `Bearer ${key}`, ...headers },
    payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], ...body },
  });
const embed = (key: string, input: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/ai/embeddings',
    headers: { authorization: `Bearer ${key}`, ...headers },
    payload: { model: 'text-embedding-3-small', input, encoding_format: 'float' },
  });
const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${base}/v1/ai`, maxRetries: 0 });

describe('rate limits on /v1/ai', () => {
  it("takes from the key's one v1 bucket and answers 429 RATE_LIMITED with Retry-After and RateLimit headers", async () => {
    const tenant = await seedV1Tenant(t.deps);
    const before = openai.requests.length;
    const remaining: string[] = [];
    for (const res of [
      await chat(tenant.live),
      await embed(tenant.live, 'a'),
      await t.v1('GET', '/mail/emails', tenant.live), // another v1 area: the same budget
      await chat(tenant.live),
      await embed(tenant.live, 'b'),
    ]) {
      expect(res.statusCode).not.toBe(429);
      expect(res.headers['ratelimit-policy']).toBe('"v1";q=5;w=5');
      remaining.push(String(res.headers.ratelimit).match(/r=(\d+)/)![1]!);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    expect(openai.requests.length - before).toBe(4);

    const refused = await chat(tenant.live);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String) } });
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers.ratelimit).toBe('"v1";r=0;t=1');
    // Refused before the provider is called.
    expect(openai.requests.length - before).toBe(4);
    const viaClient = await client(tenant.live)
      .embeddings.create({ model: 'text-embedding-3-small', input: 'x' })
      .catch((e) => e);
    expect(viaClient).toBeInstanceOf(OpenAI.RateLimitError);
    expect(viaClient.error).toMatchObject({ code: 'RATE_LIMITED' });

    // The sandbox key has its own bucket; a second later one token is back.
    expect((await chat(tenant.test)).statusCode).toBe(200);
    (t.clock as ManualClock).advance(1000);
    expect((await chat(tenant.live)).statusCode).toBe(200);
    expect((await chat(tenant.live)).statusCode).toBe(429);
  });
});

describe('Idempotency-Key on /v1/ai', () => {
  it('replays a chat completion for the same key and body without calling the provider; another body is a 409', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const ai = client(tenant.live);
    // The openai client ignores its `idempotencyKey` option (OpenAI defines no such header): send it as a header.
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'once only' }] };
    const before = openai.requests.length;
    const first = await ai.chat.completions.create(body, { headers: { 'Idempotency-Key': 'job-42' } });
    const again = await ai.chat.completions
      .create(body, { headers: { 'Idempotency-Key': 'job-42' } })
      .withResponse();
    expect(first.choices[0]!.message.content).toBe('openai says: once only');
    expect(again.data).toEqual(first);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(openai.requests.length - before).toBe(1);

    const conflict = await chat(
      tenant.live,
      { messages: [{ role: 'user', content: 'other' }] },
      {
        'idempotency-key': 'job-42',
      },
    );
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error.code).toBe('IDEMPOTENCY_CONFLICT');
    // The same key on the other operation is another request too.
    const onEmbeddings = await embed(tenant.live, 'once only', { 'idempotency-key': 'job-42' });
    expect(onEmbeddings.json().error.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(openai.requests.length - before).toBe(1);
  });

  it('replays embeddings, and releases the key after a provider failure so a retry runs', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const h = { 'idempotency-key': 'emb-1' };
    const first = await embed(tenant.live, 'vector me', h);
    const second = await embed(tenant.live, 'vector me', h);
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');

    openai.failNext(500, 3);
    const failed = await chat(tenant.live, {}, { 'idempotency-key': 'chat-5xx' });
    expect(failed.statusCode).toBe(502);
    expect(failed.json().error.code).toBe('MODEL_PROVIDER_ERROR');
    const retry = await chat(tenant.live, {}, { 'idempotency-key': 'chat-5xx' });
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers IDEMPOTENCY_IN_PROGRESS to a retry while the first request waits on the provider', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const h = { 'idempotency-key': 'slow-1' };
    const gate = openai.hold();
    try {
      const first = chat(tenant.live, {}, h);
      await expect.poll(() => gate.held()).toBe(1);
      const retry = await chat(tenant.live, {}, h);
      expect(retry.statusCode).toBe(409);
      expect(retry.json().error.code).toBe('IDEMPOTENCY_IN_PROGRESS');
      gate.release();
      expect((await first).statusCode).toBe(200);
    } finally {
      gate.release();
    }
    const replay = await chat(tenant.live, {}, h);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it("never replays one organization's answer to another organization or environment", async () => {
    const a = await seedV1Tenant(t.deps);
    const b = await seedV1Tenant(t.deps);
    const h = { 'idempotency-key': 'shared-name' };
    const mine = await chat(a.live, {}, h);
    expect(mine.statusCode).toBe(200);
    const before = openai.requests.length;
    for (const key of [b.live, a.test]) {
      const other = await chat(key, {}, h);
      expect(other.statusCode).toBe(200);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(other.json().id).not.toBe(mine.json().id);
    }
    expect(openai.requests.length - before).toBe(2);
    expect((await chat(a.live, {}, h)).json().id).toBe(mine.json().id);
  });

  it('refuses stream: true with an Idempotency-Key (400, key not taken); streams without one', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const before = openai.requests.length;
    const refused = await chat(tenant.live, { stream: true }, { 'idempotency-key': 'stream-1' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('IDEMPOTENCY_STREAM_UNSUPPORTED');
    const viaClient = await client(tenant.live)
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true },
        { headers: { 'Idempotency-Key': 'stream-2' } },
      )
      .catch((e) => e);
    expect(viaClient).toBeInstanceOf(OpenAI.BadRequestError);
    expect(viaClient.error).toMatchObject({ code: 'IDEMPOTENCY_STREAM_UNSUPPORTED' });
    expect(openai.requests.length - before).toBe(0);

    // The refused key was not claimed: it serves a non-streaming request normally.
    const plain = await chat(tenant.live, {}, { 'idempotency-key': 'stream-1' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['idempotent-replayed']).toBeUndefined();
    const streamed = await chat(tenant.live, { stream: true });
    expect(streamed.statusCode).toBe(200);
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    expect(streamed.body).toContain('data: [DONE]');
    // A stream carries the bucket's headers like any other answer.
    expect(streamed.headers.ratelimit).toMatch(/^"v1";r=\d+;t=\d+$/);
    expect(streamed.headers['x-request-id']).toBeTruthy();
  });
});

describe('/v1/openapi.json', () => {
  type Op = {
    operationId: string;
    description: string;
    tags: string[];
    requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    responses: Record<
      string,
      { content: Record<string, { schema: { properties?: Record<string, unknown> } }> }
    >;
  };

  it('lists chat completions (JSON or SSE) and embeddings with their schemas and errors', async () => {
    const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json();
    const chatOp: Op = doc.paths['/v1/ai/chat/completions'].post;
    const embedOp: Op = doc.paths['/v1/ai/embeddings'].post;
    expect(chatOp.operationId).toBe('ai.chatCompletions');
    expect(embedOp.operationId).toBe('ai.embeddings');
    expect(chatOp.tags).toEqual(['ai']);
    expect(Object.keys(chatOp.requestBody.content['application/json']!.schema.properties)).toEqual(
      expect.arrayContaining(['model', 'messages', 'stream']),
    );
    const ok = chatOp.responses['200']!.content;
    expect(Object.keys(ok).sort()).toEqual(['application/json', 'text/event-stream']);
    expect(Object.keys(ok['application/json']!.schema.properties!)).toEqual(
      expect.arrayContaining(['id', 'choices', 'usage']),
    );
    expect(Object.keys(embedOp.responses['200']!.content['application/json']!.schema.properties!)).toEqual(
      expect.arrayContaining(['data', 'model', 'usage']),
    );
    for (const op of [chatOp, embedOp]) {
      expect(Object.keys(op.responses)).toEqual(
        expect.arrayContaining(['400', '401', '404', '409', '429', '502']),
      );
      for (const code of [
        'RATE_LIMITED',
        'IDEMPOTENCY_CONFLICT',
        'MODEL_NOT_AVAILABLE',
        'MODEL_PROVIDER_ERROR',
      ])
        expect(op.description).toContain(code);
    }
    expect(chatOp.description).toContain('IDEMPOTENCY_STREAM_UNSUPPORTED');
    expect(Object.keys(chatOp.requestBody.content['application/json']!.schema.properties)).toEqual(
      expect.arrayContaining(['response_format', 'tools', 'tool_choice', 'parallel_tool_calls', 'models']),
    );
    const respOp: Op = doc.paths['/v1/ai/responses'].post;
    expect(respOp.operationId).toBe('ai.responses');
    expect(Object.keys(respOp.responses['200']!.content).sort()).toEqual([
      'application/json',
      'text/event-stream',
    ]);
    expect(Object.keys(respOp.requestBody.content['application/json']!.schema.properties)).toEqual(
      expect.arrayContaining(['model', 'input', 'instructions', 'tools', 'stream']),
    );
    const listOp: Op = doc.paths['/v1/ai/models'].get;
    const oneOp: Op = doc.paths['/v1/ai/models/{id}'].get;
    expect([listOp.operationId, oneOp.operationId]).toEqual(['ai.listModels', 'ai.retrieveModel']);
    expect(Object.keys(listOp.responses['200']!.content['application/json']!.schema.properties!)).toEqual([
      'object',
      'data',
    ]);
    expect(oneOp.responses).toHaveProperty('404');
    expect(oneOp.description).toContain('MODEL_NOT_FOUND');
  });
});
