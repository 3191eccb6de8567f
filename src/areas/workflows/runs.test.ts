import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { type V1Client, v1Client } from '../../../test/v1-client.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { finished, workflowKit } from '../../../test/workflows-kit.ts';

// Runs on the real engine (worker role): every step type against the models area's fake OpenAI server and a
// local http server opened through OUTBOUND_ALLOW; retries, failure, retry-from-failed, cancel, webhooks.

type Hit = { path: string; closed: boolean };

describe('workflow runs', { timeout: 120_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let api: V1Client;
  let slug: string;
  let openai: FakeServer;
  let site: http.Server;
  let siteUrl: string;
  const hits: Hit[] = [];
  let failSecond = 2;
  const hooks: { headers: Record<string, string>; body: string }[] = [];

  beforeAll(async () => {
    openai = await startOpenAIServer();
    site = http.createServer((req, res) => {
      const hit: Hit = { path: req.url ?? '', closed: false };
      hits.push(hit);
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      res.on('close', () => {
        if (!res.writableEnded) hit.closed = true;
      });
      req.on('end', () => {
        if (req.url?.startsWith('/hook')) {
          hooks.push({ headers: req.headers as Record<string, string>, body });
          res.writeHead(204).end();
        } else if (req.url?.startsWith('/hang')) {
          // never answers: only the client's abort ends it
        } else if (req.url === '/second' && failSecond > 0) {
          failSecond--;
          res.writeHead(503).end('busy');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ path: req.url, items: [1, 2, 3], echo: body || null }));
        }
      });
    });
    await new Promise<void>((ok) => site.listen(0, '127.0.0.1', ok));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    t = await testApp({
      background: true,
      env: {
        OPENAI_API_KEY: 'sk-test-platform',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/v1',
        OUTBOUND_ALLOW: '127.0.0.1/32',
        V1_RATE_LIMIT_BURST: '1000000',
        V1_RATE_LIMIT_PER_SEC: '100000',
        WORKFLOW_RUN_OUTPUT_MAX_KB: '2048',
      },
    });
    a = await seedV1Tenant(t.deps);
    slug = (await seedProject(t.deps, a.org)).slug;
    api = v1Client(t, a.live);
  }, 180_000);
  afterAll(async () => {
    await t.close();
    await openai.close();
    site.closeAllConnections();
    site.close();
  });

  const { create, start, until } = workflowKit(
    () => api,
    () => slug,
  );

  it('runs a DAG of llm, code, http, transform, condition and loop steps', async () => {
    const chats = () => openai.requests.filter((r) => r.path === '/v1/chat/completions').length;
    const before = chats();
    const id = await create({
      slug: 'dag',
      variables: { topic: { type: 'string', required: true } },
      steps: [
        {
          id: 'ask',
          type: 'llm',
          model: 'gpt-4o-mini',
          prompt: 'Tell me about {{topic}}',
          outputVariable: 'answer',
        },
        {
          id: 'facts',
          type: 'llm',
          provider: 'openai',
          model: 'gpt-4o-mini',
          prompt: 'Facts about {{topic}}',
          outputFormat: 'json',
          schema: { type: 'object', properties: { title: { type: 'string' } } },
        },
        { id: 'fetch', type: 'http', url: `${siteUrl}/data/{{topic}}` },
        {
          id: 'count',
          type: 'code',
          code: 'return input.steps.fetch.output.body.items.length * 10',
          dependsOn: ['fetch'],
        },
        {
          id: 'total',
          type: 'transform',
          expression: '$sum(steps.fetch.output.body.items)',
          dependsOn: ['fetch'],
        },
        {
          id: 'big',
          type: 'condition',
          expression: 'steps.total.output > 100',
          dependsOn: ['total'],
          whenTrue: ['yes'],
          whenFalse: ['no'],
        },
        { id: 'yes', type: 'code', code: 'return "big"', dependsOn: ['big'] },
        { id: 'no', type: 'code', code: 'return "small"', dependsOn: ['big'] },
        { id: 'after-yes', type: 'code', code: 'return 1', dependsOn: ['yes'] },
        {
          id: 'each',
          type: 'loop',
          items: '{{steps.fetch.output.body.items}}',
          dependsOn: ['fetch', 'ask'],
          concurrency: 2,
          steps: [
            { id: 'double', type: 'code', code: 'return input.item * 2' },
            {
              id: 'label',
              type: 'transform',
              expression: '"n" & $string(steps.double.output)',
              dependsOn: ['double'],
            },
          ],
        },
      ],
    });
    const runId = await start(id, { variables: { topic: 'otters' }, metadata: { by: 'test' } });
    const run = await until(runId, finished);
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(run.output.answer).toEqual(expect.any(String));
    expect(run.output.facts).toEqual({ title: expect.any(String) });
    expect(run.output.fetch.body.path).toBe('/data/otters');
    expect(run.output.count).toBe(30);
    expect(run.output.total).toBe(6);
    expect(run.output.big).toBe(false);
    expect(run.output.no).toBe('small');
    expect(run.stepStates.yes.status).toBe('skipped');
    expect(run.stepStates['after-yes'].status).toBe('skipped');
    expect(run.output.each).toEqual([
      { double: 2, label: 'n2' },
      { double: 4, label: 'n4' },
      { double: 6, label: 'n6' },
    ]);
    expect(run.metadata).toEqual({ by: 'test' });
    expect(run.completedSteps).toBe(8);
    expect(run.totalSteps).toBe(10);
    expect(run.creditsUsed).toBeGreaterThan(0);
    expect(run.stepStates.ask.creditsUsed).toBeGreaterThan(0);
    expect(run.totalDurationMs).toBeGreaterThanOrEqual(0);
    expect(run.stepStates.fetch).toMatchObject({ status: 'completed', attempts: 1 });
    expect(chats() - before).toBe(2);
    // The organization's usage through the function API.
    const usage = (await t.call('getWorkflowUsageForCli', { orgSlug: a.org.slug }, a.owner.token)).json();
    expect(usage.production.creditsUsed).toBeGreaterThanOrEqual(run.creditsUsed);
    expect(usage.prices['image.perImage']).toBe(4);
  });

  it('stores image and audio outputs as CDN assets; a provider without the capability fails clearly', async () => {
    const id = await create({
      slug: 'media',
      steps: [
        { id: 'pic', type: 'image', model: 'dall-e-3', prompt: 'an otter', size: '256x256' },
        { id: 'say', type: 'audio', model: 'tts-1', prompt: 'hello there otter', voice: 'alloy' },
      ],
    });
    const run = await until(await start(id), finished);
    expect(run.status, JSON.stringify(run)).toBe('completed');
    const asset = (await api.get(`/cdn/assets/${run.output.pic.assetId}`)).json();
    expect(asset).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(run.output.say.assetId).toEqual(expect.any(String));
    const noImage = await create({
      slug: 'no-image',
      steps: [{ id: 'pic', type: 'image', provider: 'anthropic', model: 'claude-sonnet-4-5', prompt: 'x' }],
    });
    const failed = await until(await start(noImage), finished);
    expect(failed.status).toBe('failed');
    expect(failed.stepStates.pic.attempts).toBe(1);
    expect(failed.error).toMatch(/image generation/);
    const noVideo = await create({
      slug: 'no-video',
      steps: [{ id: 'v', type: 'video', model: 'gpt-4o-mini', prompt: 'x' }],
    });
    const v = await until(await start(noVideo), finished);
    expect(v.error).toMatch(/does not offer video generation/);
  });

  it("awaits a code step's Promise; an output over 1 MB fails the step, named, without retries", async () => {
    const promised = await create({
      slug: 'promised',
      steps: [
        { id: 'later', type: 'code', code: 'return Promise.resolve(input.variables).then(() => ({ n: 1 }))' },
      ],
    });
    const ok = await until(await start(promised), finished);
    expect(ok.status, JSON.stringify(ok)).toBe('completed');
    expect(ok.output.later).toEqual({ n: 1 });
    const big = await create({
      slug: 'big',
      steps: [
        { id: 'big', type: 'code', code: "return 'x'.repeat(5 * 1024 * 1024)" },
        { id: 'never', type: 'code', code: 'return 1', dependsOn: ['big'] },
      ],
    });
    const failed = await until(await start(big), finished);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(
      "Step 'big' failed: Code failed: Output too large: 5.0 MB of JSON, over the 1.0 MB limit for a step's output.",
    );
    expect(failed.stepStates.big.attempts).toBe(1);
    expect(failed.stepStates.never.status).toBe('skipped');
    // Every step type is held to the limit, not only code.
    const wide = await create({
      slug: 'wide',
      steps: [{ id: 'wide', type: 'transform', expression: "$pad('', 2000000, 'x')" }],
    });
    const w = await until(await start(wide), finished);
    expect(w.error).toBe(
      "Step 'wide' failed: Output too large: 1.9 MB of JSON, over the 1.0 MB limit for a step's output.",
    );
    // And a run's outputs together (2 MB here, by WORKFLOW_RUN_OUTPUT_MAX_KB).
    const pad = (id: string, dependsOn?: string[]) => ({
      id,
      type: 'transform',
      expression: "$pad('', 900000, 'x')",
      ...(dependsOn ? { dependsOn } : {}),
    });
    const heavy = await create({ slug: 'heavy', steps: [pad('p1'), pad('p2', ['p1']), pad('p3', ['p2'])] });
    const h = await until(await start(heavy), finished);
    expect(h.error).toBe(
      "Step 'p3' failed: Output too large: the run's step outputs would reach 2.6 MB, over the 2.0 MB limit for a run.",
    );
  });

  it('refuses at create and update a model the configured provider does not list, naming the step', async () => {
    const step = (model: string) => ({ id: 'ask', type: 'llm', provider: 'openai', model, prompt: 'hi' });
    const bad = await api.post('/workflows', {
      projectSlug: slug,
      slug: 'no-such-model',
      name: 'wf',
      steps: [step('gpt-9-imaginary')],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('WORKFLOW_INVALID');
    expect(bad.json().error.message).toContain(
      "steps.ask: model 'openai/gpt-9-imaginary': openai does not offer 'gpt-9-imaginary'",
    );
    const id = await create({ slug: 'listed-model', steps: [step('gpt-4o-mini')] });
    const patched = await api.patch(`/workflows/${id}`, {
      steps: [{ id: 'loop', type: 'loop', items: '[1]', steps: [step('gpt-9-imaginary')] }],
    });
    expect(patched.statusCode).toBe(400);
    expect(patched.json().error.message).toContain('steps.loop.steps.ask: model');
    // Anthropic is configured but unreachable here: its list cannot be read, so the model is not refused.
    await create({
      slug: 'unknowable',
      steps: [{ id: 'a', type: 'llm', provider: 'anthropic', model: 'claude-x', prompt: 'hi' }],
    });
  });

  it('retries a step with back-off, fails the run when attempts run out, and retries from the failed step', async () => {
    const id = await create({
      slug: 'flaky',
      steps: [
        { id: 'first', type: 'http', url: `${siteUrl}/first` },
        {
          id: 'second',
          type: 'http',
          url: `${siteUrl}/second`,
          dependsOn: ['first'],
          retry: { maxAttempts: 2, backoffMs: 50 },
        },
        { id: 'third', type: 'code', code: 'return 3', dependsOn: ['second'] },
      ],
    });
    const firstHits = () => hits.filter((h) => h.path === '/first').length;
    // first succeeds; second fails twice (its two attempts) → the run fails, third is skipped.
    const runId = await start(id, {
      webhook: { url: `${siteUrl}/hook`, secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=' },
    });
    const failed = await until(runId, finished);
    expect(failed.status, JSON.stringify(failed)).toBe('failed');
    expect(failed.stepStates.second).toMatchObject({ status: 'failed', attempts: 2 });
    expect(failed.stepStates.second.lastError).toContain('HTTP 503');
    expect(failed.stepStates.third.status).toBe('skipped');
    expect(failed.error).toContain("Step 'second' failed");
    const retried = await api.post(`/workflows/runs/${runId}/retry`);
    expect(retried.statusCode).toBe(200);
    const done = await until(runId, finished);
    expect(done.status).toBe('completed');
    expect(done.output.third).toBe(3);
    expect(firstHits()).toBe(1);
    // Both outcomes were signed webhooks (Standard Webhooks) through the SSRF guard.
    const end = Date.now() + 30_000;
    while (hooks.length < 2 && Date.now() < end) await new Promise((ok) => setTimeout(ok, 50));
    const wh = new Webhook('whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=');
    const types = hooks.map((h) => (wh.verify(h.body, h.headers) as { type: string }).type).sort();
    expect(types).toEqual(['workflow.run.completed', 'workflow.run.failed']);
  });

  it('cancel aborts the running http request at the server and no later step starts', async () => {
    const id = await create({
      slug: 'cancel',
      steps: [
        { id: 'slow', type: 'http', url: `${siteUrl}/hang` },
        { id: 'later', type: 'http', url: `${siteUrl}/later`, dependsOn: ['slow'] },
      ],
    });
    const runId = await start(id);
    await until(runId, (r) => r.stepStates.slow.status === 'running');
    const end = Date.now() + 30_000;
    while (!hits.some((h) => h.path === '/hang') && Date.now() < end)
      await new Promise((ok) => setTimeout(ok, 20));
    const c = await api.post(`/workflows/runs/${runId}/cancel`);
    expect(c.json().status).toBe('cancelled');
    const hang = hits.find((h) => h.path === '/hang')!;
    while (!hang.closed && Date.now() < end) await new Promise((ok) => setTimeout(ok, 20));
    expect(hang.closed).toBe(true);
    const run = (await api.get(`/workflows/runs/${runId}`)).json();
    expect(run.stepStates.slow.status).toBe('skipped');
    expect(run.stepStates.later.status).toBe('skipped');
    expect(hits.some((h) => h.path === '/later')).toBe(false);
  });
});
