import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeServer, json, startFake } from '../../../test/fakes/fake-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { hasVector, memoryTenant } from '../../../test/memory-kit.ts';

// memory.add with inference (docs/memory.md, "Inference"). The model is a stub OpenAI-compatible server on
// 127.0.0.1 (the `pier` provider, PIER_MODELS_URL) answering fixed extractions and decisions for the
// conversations below; without a model named (no TEXT_MODEL here), the rules decide.

const MODEL = 'pier/extractor';
let stub: FakeServer;
let t: TestApp;

type ChatBody = { model: string; messages: { role: string; content: string }[] };
const chatCalls = () => stub.requests.filter((r) => r.path === '/v1/chat/completions');

/** The fixed answers: what a model would extract from these messages, and how it would reconcile. */
function answer(body: ChatBody): unknown {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const prompt = body.messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n');
  if (body.model === 'garbage') return 'these are not the facts you asked for';
  if (/extract facts/i.test(system)) {
    const facts = [];
    if (/live in Berlin/.test(prompt))
      facts.push(
        { content: 'User lives in Berlin.', confidence: 0.95, tags: ['home'], message: 0, eventAt: null },
        { content: 'User works as a nurse.', confidence: 0.9, tags: ['work'], message: 1, eventAt: null },
      );
    if (/moved to Lisbon/.test(prompt))
      facts.push({
        content: 'User moved to Lisbon in February 2026 and lives there.',
        confidence: 0.97,
        tags: ['home'],
        message: 0,
        eventAt: '2026-02',
      });
    if (/gave up nursing/.test(prompt))
      facts.push({
        content: 'User no longer works as a nurse.',
        confidence: 0.9,
        tags: [],
        message: 0,
        eventAt: null,
      });
    if (/invented/.test(prompt))
      facts.push({
        content: 'User likes invented ids.',
        confidence: 0.5,
        tags: [],
        message: 0,
        eventAt: null,
      });
    return { facts };
  }
  // Reconciliation: the stored memories are listed as "mN: text", the new facts as "i: text".
  const stored = [...prompt.matchAll(/^(m\d+): (.*)$/gm)].map((m) => ({ id: m[1]!, text: m[2]! }));
  const facts = [...prompt.matchAll(/^(\d+): (.*)$/gm)].map((m) => ({ i: Number(m[1]), text: m[2]! }));
  const find = (re: RegExp) => stored.find((s) => re.test(s.text))?.id ?? null;
  return {
    decisions: facts.map((f) => {
      if (/Lisbon/.test(f.text) && find(/Berlin/))
        return {
          fact: f.i,
          event: 'UPDATE',
          memory: find(/Berlin/),
          content: 'User lives in Lisbon (moved from Berlin in February 2026).',
          reason: 'The user moved: Lisbon replaces Berlin as home.',
        };
      if (/no longer works as a nurse/.test(f.text) && find(/nurse/))
        return {
          fact: f.i,
          event: 'DELETE',
          memory: find(/nurse/),
          content: null,
          reason: 'The user stopped nursing.',
        };
      if (/invented/.test(f.text))
        return { fact: f.i, event: 'UPDATE', memory: 'm99', content: null, reason: 'Points at nothing.' };
      return {
        fact: f.i,
        event: 'ADD',
        memory: null,
        content: null,
        reason: 'New information about the user.',
      };
    }),
  };
}

beforeAll(async () => {
  stub = await startFake((req, res) => {
    if (req.method === 'POST' && req.path === '/v1/chat/completions') {
      const body = req.body as ChatBody;
      const out = answer(body);
      json(res, 200, {
        id: 'cmpl-stub',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: typeof out === 'string' ? out : JSON.stringify(out) },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      });
      return;
    }
    json(res, 404, { error: { message: 'no route', type: 'invalid_request_error' } });
  });
  t = await testApp({
    env: { PIER_MODELS_URL: `${stub.url}/v1`, MODEL_MAX_RETRIES: '0', MODEL_RETRY_BASE_MS: '5' },
  });
});
afterAll(async () => {
  await t?.close();
  await stub?.close();
});
beforeEach(({ skip }) => {
  // memories.test.ts asserts the 503 answer on a database without pgvector.
  if (!hasVector(t)) skip();
});

async function agentOf(live: Awaited<ReturnType<typeof memoryTenant>>['live'], body: object = {}) {
  const res = await live.post('/memory/agents', { name: 'Companion', ...body });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

describe('inference with a model', () => {
  it('extracts facts from messages; a contradicting later message supersedes the old fact, which recall then leaves out', async () => {
    const { live } = await memoryTenant(t);
    const agentId = await agentOf(live);
    const before = chatCalls().length;
    const first = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      model: MODEL,
      messages: [
        { role: 'user', content: 'Hi! I live in Berlin, near the Spree.', id: 'msg-1' },
        { role: 'user', content: 'I work as a nurse at the Charité.', id: 'msg-2' },
      ],
    });
    expect(first.statusCode).toBe(201);
    const a = first.json();
    expect(a).toMatchObject({ inferred: true, model: MODEL, created: 2 });
    expect(a.results.map((r: { event: string }) => r.event)).toEqual(['ADD', 'ADD']);
    // Two model calls: extraction, then reconciliation.
    expect(chatCalls().length).toBe(before + 2);
    const berlin = a.results[0].memory;
    expect(berlin).toMatchObject({
      content: 'User lives in Berlin.',
      type: 'semantic',
      confidence: 0.95,
      tags: ['home'],
      tier: 'warm',
      lineage: { source: { index: 0, role: 'user', id: 'msg-1' }, model: MODEL },
    });
    expect(berlin.lineage.source.excerpt).toBe('Hi! I live in Berlin, near the Spree.');
    expect(a.results[1].memory.lineage.source).toMatchObject({ index: 1, id: 'msg-2' });

    const second = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      model: MODEL,
      messages: [
        {
          role: 'user',
          content: 'I moved to Lisbon last month, the Berlin flat is sold.',
          createdAt: '2026-03-10T09:00:00Z',
        },
      ],
    });
    expect(second.statusCode).toBe(201);
    const b = second.json();
    expect(b.results).toHaveLength(1);
    const upd = b.results[0];
    expect(upd).toMatchObject({
      event: 'UPDATE',
      reason: 'The user moved: Lisbon replaces Berlin as home.',
      previous: { id: berlin.id, content: 'User lives in Berlin.' },
    });
    const lisbon = upd.memory;
    expect(lisbon.content).toBe('User lives in Lisbon (moved from Berlin in February 2026).');
    expect(lisbon.lineage.supersedes).toEqual([{ id: berlin.id, content: 'User lives in Berlin.' }]);
    expect(lisbon.lineage.source).toMatchObject({ index: 0, at: '2026-03-10T09:00:00.000Z' });
    expect(lisbon).toMatchObject({ eventAt: '2026-02-01T00:00:00.000Z', eventPrecision: 'month' });

    // The old fact: archived, valid until the new one began, linked to it.
    const old = (await live.get(`/memory/memories/${berlin.id}`)).json();
    expect(old).toMatchObject({
      tier: 'archived',
      validUntil: '2026-02-01T00:00:00.000Z',
      lineage: { supersededBy: { id: lisbon.id } },
    });

    // The new fact wins recall; the archived one is not recalled by default.
    const r = (
      await live.post('/memory/memories/recall', { query: 'where does the user live?', agentId })
    ).json();
    expect(r.memories[0].id).toBe(lisbon.id);
    expect(r.memories.map((m: { id: string }) => m.id)).not.toContain(berlin.id);

    // History shows each decision with its reason, on both memories.
    const hOld = (await live.get(`/memory/memories/${berlin.id}/history`)).json();
    expect(hOld.items.map((i: { event: string; decision: string }) => [i.event, i.decision])).toEqual([
      ['added', 'ADD'],
      ['superseded', 'UPDATE'],
    ]);
    expect(hOld.items[0]).toMatchObject({ reason: 'New information about the user.', model: MODEL });
    expect(hOld.items[1]).toMatchObject({
      reason: 'The user moved: Lisbon replaces Berlin as home.',
      relatedMemoryId: lisbon.id,
      tier: 'warm',
    });
    const hNew = (await live.get(`/memory/memories/${lisbon.id}/history`)).json();
    expect(hNew.items).toHaveLength(1);
    expect(hNew.items[0]).toMatchObject({ event: 'added', decision: 'UPDATE', relatedMemoryId: berlin.id });

    // DELETE: a fact that ends another archives it, with the reason.
    const third = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      model: MODEL,
      content: 'I gave up nursing for good.',
    });
    expect(third.json().results[0]).toMatchObject({
      event: 'DELETE',
      reason: 'The user stopped nursing.',
      previous: { content: 'User works as a nurse.' },
      memory: null,
    });
    const nurseId = a.results[1].memory.id;
    expect((await live.get(`/memory/memories/${nurseId}`)).json()).toMatchObject({ tier: 'archived' });
    const hNurse = (await live.get(`/memory/memories/${nurseId}/history`)).json();
    expect(hNurse.items.at(-1)).toMatchObject({
      event: 'deleted',
      decision: 'DELETE',
      reason: 'The user stopped nursing.',
    });
  });

  it('counts each inference call’s tokens in the organization’s model usage, under the calling key', async () => {
    const { live, tenant } = await memoryTenant(t);
    const agentId = await agentOf(live);
    const res = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      model: MODEL,
      content: 'I live in Berlin and work as a nurse.',
    });
    expect(res.statusCode).toBe(201);
    // Two calls (extraction, reconciliation), 10 + 10 tokens each from the stub, as the proxy counts them.
    const usage = await t.call('getModelUsageForCli', { orgSlug: tenant.org.slug }, tenant.owner.token);
    expect(usage.statusCode).toBe(200);
    const rows = usage.json().rows as { model: string; keyId: string; environment: string }[];
    expect(rows).toEqual([
      expect.objectContaining({
        environment: 'production',
        model: MODEL,
        requests: 2,
        promptTokens: 20,
        completionTokens: 20,
        totalTokens: 40,
      }),
    ]);
    expect(rows[0]!.keyId).not.toBe('');
    // Rules spend nothing: no row is added.
    await live.post('/memory/memories/add', { agentId, infer: true, content: 'I like tea. I like tea.' });
    const again = await t.call('getModelUsageForCli', { orgSlug: tenant.org.slug }, tenant.owner.token);
    expect(again.json().totals).toMatchObject({ requests: 2, totalTokens: 40 });
  });

  it('uses the agent’s model and inference setting when the call names none', async () => {
    const { live } = await memoryTenant(t);
    const agentId = await agentOf(live, { infer: true, inferModel: MODEL });
    const agent = (await live.get(`/memory/agents/${agentId}`)).json();
    expect(agent).toMatchObject({ infer: true, inferModel: MODEL });
    const res = await live.post('/memory/memories/add', { agentId, content: 'I live in Berlin.' });
    expect(res.json()).toMatchObject({ inferred: true, model: MODEL });
    // A call can still store the message as it is.
    const raw = await live.post('/memory/memories/add', {
      agentId,
      infer: false,
      content: 'I live in Berlin.',
    });
    expect(raw.json()).toMatchObject({ inferred: false, model: null, created: 1 });
    expect(raw.json().results[0].memory).toMatchObject({ content: 'I live in Berlin.', type: 'episodic' });
  });

  it('a decision naming a memory the model was not shown adds the fact; an answer that is not JSON stores nothing (502)', async () => {
    const { live } = await memoryTenant(t);
    const agentId = await agentOf(live);
    const res = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      model: MODEL,
      content: 'I invented a word.',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().results[0]).toMatchObject({
      event: 'ADD',
      memory: { content: 'User likes invented ids.' },
    });

    const bad = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      model: 'pier/garbage',
      content: 'I live in Berlin.',
    });
    expect(bad.statusCode).toBe(502);
    expect(bad.json().error.code).toBe('MEMORY_INFERENCE_FAILED');
    const list = (await live.get('/memory/memories', { agentId })).json();
    expect(list.total).toBe(1);
  });
});

describe('inference without a model (rules)', () => {
  it('splits messages into statements, skips questions and the assistant, folds exact and near duplicates', async () => {
    const { live } = await memoryTenant(t);
    const agentId = await agentOf(live);
    const calls = chatCalls().length;
    const res = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      messages: [
        {
          role: 'user',
          content: 'Hi! I moved to Lisbon last month, the Berlin flat is sold. Any good cafés there?',
        },
        { role: 'assistant', content: 'Welcome to Lisbon, you will love the pastries.' },
        { role: 'user', content: 'I moved to Lisbon last month.' },
      ],
    });
    expect(res.statusCode).toBe(201);
    const out = res.json();
    expect(out).toMatchObject({ inferred: true, model: 'pier-rules/v1', created: 2 });
    expect(out.results.map((r: { event: string; fact: string }) => [r.event, r.fact])).toEqual([
      ['ADD', 'I moved to Lisbon last month.'],
      ['ADD', 'The Berlin flat is sold.'],
      ['NONE', 'I moved to Lisbon last month.'],
    ]);
    const moved = out.results[0].memory;
    expect(out.results[2].previous.id).toBe(moved.id);
    expect(chatCalls().length).toBe(calls);

    // A near duplicate is not stored; a fuller statement replaces the one it extends.
    const again = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      content: 'i moved to lisbon LAST month!\nThe Berlin flat is sold to a friend.',
    });
    const r2 = again.json();
    expect(r2.results.map((r: { event: string }) => r.event)).toEqual(['NONE', 'UPDATE']);
    expect(r2.results[0].reason).toMatch(/already stored/);
    const flat = out.results[1].memory;
    expect(r2.results[1].previous).toEqual({ id: flat.id, content: 'The Berlin flat is sold.' });
    expect((await live.get(`/memory/memories/${flat.id}`)).json()).toMatchObject({
      tier: 'archived',
      lineage: { supersededBy: { content: 'The Berlin flat is sold to a friend.' } },
    });

    // History: the matched memory shows each NONE with its reason.
    const h = (await live.get(`/memory/memories/${moved.id}/history`)).json();
    expect(h.items.map((i: { event: string }) => i.event)).toEqual(['added', 'confirmed', 'confirmed']);
    expect(h.items[1]).toMatchObject({
      decision: 'NONE',
      reason: 'The same statement is already stored.',
      model: 'pier-rules/v1',
    });
    expect((await live.get('/memory/memories', { agentId })).json().total).toBe(3);
  });
});

describe('memory.add input and isolation', () => {
  it('answers 400 for bad input and 404 for another tenant’s agent', async () => {
    const { live, sandbox } = await memoryTenant(t);
    const other = await memoryTenant(t);
    const agentId = await agentOf(live);
    const cases = [
      { agentId, content: 'x', messages: [{ content: 'y' }] },
      { agentId },
      { agentId, messages: [] },
      { agentId, messages: [{ role: 'robot', content: 'x' }] },
      { agentId, content: '   ' },
      { content: 'no agent' },
      { agentId, content: 'x', referenceTime: 'last tuesday' },
    ];
    for (const body of cases) {
      const res = await live.post('/memory/memories/add', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
    for (const client of [other.live, sandbox]) {
      const res = await client.post('/memory/memories/add', {
        agentId,
        infer: true,
        content: 'I live in Porto.',
      });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('AGENT_NOT_FOUND');
    }
    // A model no provider key serves here: 404 with its name, nothing stored.
    const unknown = await live.post('/memory/memories/add', {
      agentId,
      infer: true,
      model: 'openai/gpt-4o-mini',
      content: 'I live in Porto.',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('MODEL_NOT_AVAILABLE');
    expect((await live.get('/memory/memories', { agentId })).json().total).toBe(0);
  });
});

describe('time', () => {
  it('"last month" said on 2026-03-10 is February 2026; a recall filtered to February finds it', async () => {
    const { live } = await memoryTenant(t);
    const agentId = await agentOf(live);
    const said = '2026-03-10T09:00:00Z';
    const moved = await live.post('/memory/memories', {
      agentId,
      content: 'I moved to Lisbon last month.',
      referenceTime: said,
    });
    expect(moved.statusCode).toBe(201);
    expect(moved.json()).toMatchObject({
      eventAt: '2026-02-01T00:00:00.000Z',
      eventPrecision: 'month',
      validUntil: null,
    });
    // Without a time in the text, the time it was said; told explicitly (or in metadata), that time.
    const yoga = await live.post('/memory/memories', {
      agentId,
      content: 'I moved my yoga class to Lisbon.',
      referenceTime: said,
    });
    expect(yoga.json()).toMatchObject({ eventAt: '2026-03-10T09:00:00.000Z', eventPrecision: 'instant' });
    const told = await live.post('/memory/memories', {
      agentId,
      content: 'Lisbon trip booked',
      metadata: { eventAt: '2025-12-24' },
    });
    expect(told.json()).toMatchObject({ eventAt: '2025-12-24T00:00:00.000Z', eventPrecision: 'day' });
    // Through memory.add: the message's own time.
    const added = await live.post('/memory/memories/add', {
      agentId,
      messages: [{ content: 'We visited Lisbon two weeks ago.', createdAt: said }],
    });
    expect(added.json().results[0].memory).toMatchObject({
      eventAt: '2026-02-23T00:00:00.000Z',
      eventPrecision: 'week',
    });

    const feb = await live.post('/memory/memories/recall', {
      query: 'Lisbon',
      agentId,
      eventFrom: '2026-02-01T00:00:00Z',
      eventTo: '2026-03-01T00:00:00Z',
    });
    expect(feb.statusCode).toBe(200);
    expect(
      feb
        .json()
        .memories.map((m: { content: string }) => m.content)
        .sort(),
    ).toEqual(['I moved to Lisbon last month.', 'We visited Lisbon two weeks ago.']);
    const all = (await live.post('/memory/memories/recall', { query: 'Lisbon', agentId })).json();
    expect(all.memories).toHaveLength(4);
    const bad = await live.post('/memory/memories/recall', { query: 'Lisbon', eventFrom: 'February' });
    expect(bad.statusCode).toBe(400);
  });

  it('a hybrid recall ranks memories of the time its query names higher', async () => {
    const { live } = await memoryTenant(t);
    const agentId = await agentOf(live);
    const feb = (
      await live.post('/memory/memories', {
        agentId,
        content: 'I painted the kitchen blue.',
        eventAt: '2026-02-14T10:00:00Z',
      })
    ).json();
    const jul = (
      await live.post('/memory/memories', {
        agentId,
        content: 'I painted the kitchen white.',
        eventAt: '2025-07-20T10:00:00Z',
      })
    ).json();
    const first = async (query: string, extra = {}) =>
      (
        await live.post('/memory/memories/recall', {
          query,
          agentId,
          referenceTime: '2026-03-10T09:00:00Z',
          ...extra,
        })
      ).json().memories[0].id;
    expect(await first('kitchen painting in February')).toBe(feb.id);
    expect(await first('kitchen painting in July')).toBe(jul.id);
    expect(await first('kitchen painting last month')).toBe(feb.id);
    // Without the boost, the words alone decide (both memories say the same of the kitchen).
    const off = (
      await live.post('/memory/memories/recall', {
        query: 'kitchen painting in July',
        agentId,
        timeBoost: false,
      })
    ).json();
    expect(off.memories).toHaveLength(2);
  });

  it('"the week after <an event>" boosts memories of the week after the memory that tells of that event', async () => {
    const { live } = await memoryTenant(t);
    const agentId = await agentOf(live);
    const store = async (content: string, eventAt: string) =>
      (await live.post('/memory/memories', { agentId, content, eventAt })).json().id as string;
    await store('Went to the adoption agency meeting with Sam.', '2026-02-10T10:00:00Z');
    const before = await store('She started a pottery course.', '2026-01-20T10:00:00Z');
    const after = await store('She started a yoga course.', '2026-02-14T10:00:00Z');
    const first = async (query: string) =>
      (await live.post('/memory/memories/recall', { query, agentId, limit: 3 })).json().memories as {
        id: string;
      }[];
    const weekAfter = await first('which course did she start the week after the adoption meeting?');
    expect(weekAfter.findIndex((m) => m.id === after)).toBeLessThan(
      weekAfter.findIndex((m) => m.id === before),
    );
    const daysBefore = await first('which course did she start three weeks before the adoption meeting?');
    expect(daysBefore.findIndex((m) => m.id === before)).toBeLessThan(
      daysBefore.findIndex((m) => m.id === after),
    );
  });
});
