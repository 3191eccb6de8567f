import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedMember, seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { type V1Client, v1Client } from '../../../test/v1-client.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { finished, workflowKit } from '../../../test/workflows-kit.ts';

// Durability on the real engine against a local receiver: loop items memoised (a re-claimed loop sends
// only what had not completed), sub-step retries per item, per-item progress, Idempotency-Keys stable across
// retries, crashes not spending attempts (a lease taken from under a worker, as SIGKILL leaves it), the
// poison-step bound, retry back-off settings and non-retryable statuses, continueOnError, and a run started
// twice with one Idempotency-Key.

type Hit = { path: string; key: string | undefined };

describe('durable workflow runs', { timeout: 180_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let api: V1Client;
  let slug: string;
  let site: http.Server;
  let siteUrl: string;
  const hits: Hit[] = [];
  /** path → statuses to answer before answering 200 (one per request). */
  const script = new Map<string, number[]>();
  const hang = new Set<string>();

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const path = req.url ?? '';
        hits.push({ path, key: req.headers['idempotency-key'] as string | undefined });
        if (hang.has(path)) return; // answered never: the step stays in flight
        const status = script.get(path)?.shift() ?? 200;
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ path, status }));
      });
    });
    await new Promise<void>((ok) => site.listen(0, '127.0.0.1', ok));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    t = await testApp({
      background: true,
      env: {
        OUTBOUND_ALLOW: '127.0.0.1/32',
        V1_RATE_LIMIT_BURST: '1000000',
        V1_RATE_LIMIT_PER_SEC: '100000',
        WORKFLOW_LEASE_MS: '600',
      },
    });
    a = await seedV1Tenant(t.deps);
    slug = (await seedProject(t.deps, a.org)).slug;
    api = v1Client(t, a.live);
  }, 180_000);
  afterAll(async () => {
    await t.close();
    site.closeAllConnections();
    site.close();
  });

  const { create, start, until } = workflowKit(
    () => api,
    () => slug,
  );
  const at = (prefix: string) => hits.filter((h) => h.path.startsWith(prefix));
  let member: { token: string } | null = null;
  const view = async (runId: string) => {
    member ??= await seedMember(t.deps, a.org.id, 'member');
    const r = await t.call(
      'getWorkflowRunViewForCli',
      { orgSlug: a.org.slug, environment: 'production', runId },
      member.token,
    );
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };

  it('retries a loop sub-step per item, with one Idempotency-Key per item across its attempts', async () => {
    script.set('/items/2', [503, 500]);
    const id = await create({
      slug: 'loop-retry',
      steps: [
        {
          id: 'each',
          type: 'loop',
          items: '[0,1,2,3,4]',
          concurrency: 2,
          steps: [
            {
              id: 'post',
              type: 'http',
              method: 'POST',
              url: `${siteUrl}/items/{{item}}`,
              body: { n: '{{item}}' },
              retry: { maxAttempts: 3, backoffMs: 10 },
            },
          ],
        },
      ],
    });
    const run = await until(await start(id), finished);
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(run.stepStates.each).toMatchObject({ attempts: 1, completedItems: 5, totalItems: 5 });
    expect(run.output.each.map((o: any) => o.post.status)).toEqual([200, 200, 200, 200, 200]);
    // Item 2 was tried three times in place; no other item was sent twice.
    const counts = [0, 1, 2, 3, 4].map((i) => at(`/items/${i}`).length);
    expect(counts).toEqual([1, 1, 3, 1, 1]);
    const keys = [0, 1, 2, 3, 4].map((i) => new Set(at(`/items/${i}`).map((h) => h.key)));
    for (const k of keys) expect(k.size).toBe(1);
    expect(new Set(keys.map((k) => [...k][0])).size).toBe(5);
    expect([...keys[0]!][0]).toMatch(/^pier-wf-[0-9a-f]{40}$/);
  });

  it('a loop run again sends only the items that had not completed', async () => {
    // Item 2 answers 404 (not retryable by default): the loop fails after items 0 and 1 (concurrency 1).
    script.set('/memo/2', [404]);
    const id = await create({
      slug: 'loop-memo',
      steps: [
        {
          id: 'each',
          type: 'loop',
          items: '[0,1,2,3]',
          concurrency: 1,
          steps: [
            { id: 'post', type: 'http', method: 'POST', url: `${siteUrl}/memo/{{item}}` },
            { id: 'double', type: 'transform', expression: 'item * 2' },
          ],
        },
      ],
    });
    const runId = await start(id);
    const failed = await until(runId, finished);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain("Item 2, sub-step 'post': HTTP 404");
    expect(failed.stepStates.each).toMatchObject({ completedItems: 2, totalItems: 4 });
    expect(at('/memo/2')).toHaveLength(1); // a 404 is not retried
    expect(at('/memo/3')).toHaveLength(0); // the failure stopped the loop
    const firstKeys = at('/memo/2').map((h) => h.key);
    expect((await api.post(`/workflows/runs/${runId}/retry`)).statusCode).toBe(200);
    const done = await until(runId, finished);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect([0, 1, 2, 3].map((i) => at(`/memo/${i}`).length)).toEqual([1, 1, 2, 1]);
    expect(at('/memo/2')[1]!.key).toBe(firstKeys[0]);
    expect(done.output.each).toEqual([0, 1, 2, 3].map((i) => ({ post: expect.anything(), double: i * 2 })));
    expect(done.stepStates.each).toMatchObject({ completedItems: 4, totalItems: 4 });
  });

  it('a step whose worker died resumes without spending an attempt; a poison step is failed', async () => {
    hang.add('/crash');
    const id = await create({
      slug: 'crash',
      steps: [{ id: 'call', type: 'http', url: `${siteUrl}/crash`, retry: { maxAttempts: 1 } }],
    });
    const runId = await start(id);
    const end = Date.now() + 60_000;
    while (!at('/crash').length && Date.now() < end) await new Promise((ok) => setTimeout(ok, 20));
    // What SIGKILL leaves behind: the step running under another worker whose lease has passed.
    hang.delete('/crash');
    await t.deps.db.query(
      `update workflow_step_states set worker_id = 'dead', lease_until = now() - interval '1 second'
        where run_id = $1`,
      [runId],
    );
    const run = await until(runId, finished);
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(run.stepStates.call).toMatchObject({ attempts: 1, crashRecoveries: 1 });
    const keys = new Set(at('/crash').map((h) => h.key));
    expect(at('/crash').length).toBe(2);
    expect(keys.size).toBe(1);
    // The run page: the claim the dead worker held is shown interrupted, then the attempt that completed.
    const call = (await view(runId)).stepDetails.find((d: { id: string }) => d.id === 'call');
    expect(call.attempts.map((x: Record<string, unknown>) => [x.attempt, x.outcome])).toEqual([
      [1, 'interrupted'],
      [1, 'completed'],
    ]);

    hang.add('/poison');
    const pid = await create({
      slug: 'poison',
      steps: [{ id: 'call', type: 'http', url: `${siteUrl}/poison` }],
    });
    const prun = await start(pid);
    while (!at('/poison').length && Date.now() < end) await new Promise((ok) => setTimeout(ok, 20));
    await t.deps.db.query(
      `update workflow_step_states set worker_id = 'dead', crashes = 5, lease_until = now() - interval '1 second'
        where run_id = $1`,
      [prun],
    );
    const failed = await until(prun, finished);
    hang.delete('/poison');
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('Its worker stopped 6 times while running it');
    expect(failed.stepStates.call).toMatchObject({ attempts: 1, crashRecoveries: 6 });
    expect(at('/poison')).toHaveLength(1);
  });

  it("the run page shows each attempt with its own error and the step's resolved input", async () => {
    script.set('/orders/A7', [503, 500]);
    const id = await create({
      slug: 'attempts',
      variables: { order: { type: 'string', default: 'A7' }, token: { type: 'string', default: 's3cret' } },
      steps: [
        {
          id: 'send',
          type: 'http',
          method: 'POST',
          url: `${siteUrl}/orders/{{order}}`,
          headers: { authorization: 'Bearer {{token}}', 'x-order': '{{order}}' },
          body: { order: '{{order}}' },
          retry: { maxAttempts: 3, backoffMs: 10 },
        },
      ],
    });
    const runId = await start(id);
    expect((await until(runId, finished)).status).toBe('completed');
    const send = (await view(runId)).stepDetails.find((d: { id: string }) => d.id === 'send');
    expect(send.attempts.map((x: Record<string, unknown>) => [x.attempt, x.outcome, x.error])).toEqual([
      [1, 'retrying', `HTTP 503 from ${siteUrl}/orders/A7.`],
      [2, 'retrying', `HTTP 500 from ${siteUrl}/orders/A7.`],
      [3, 'completed', null],
    ]);
    for (const x of send.attempts) expect(x.durationMs).toBeGreaterThanOrEqual(0);
    const input = JSON.parse(send.inputPreview);
    expect(input).toMatchObject({
      method: 'POST',
      url: `${siteUrl}/orders/A7`,
      headers: { authorization: '[hidden]', 'x-order': 'A7', 'content-type': 'application/json' },
      body: '{"order":"A7"}',
    });
    expect(input.headers['Idempotency-Key']).toMatch(/^pier-wf-[0-9a-f]{40}$/);
    expect(send.inputTruncated).toBe(false);
  });

  it('a worker whose lease renewal came late does not claim the step it is still running', async () => {
    hang.add('/late');
    const id = await create({ slug: 'late', steps: [{ id: 'call', type: 'http', url: `${siteUrl}/late` }] });
    const runId = await start(id);
    const end = Date.now() + 60_000;
    while (!at('/late').length && Date.now() < end) await new Promise((ok) => setTimeout(ok, 20));
    // What a loaded event loop leaves: this worker's own lease already past, its renewal not yet run, and
    // the worker woken to claim (the wake-up comes at commit, before the next renewal).
    for (let i = 0; i < 5; i++) {
      await t.deps.db.transaction(async (tx) => {
        await tx.query(
          `update workflow_step_states set lease_until = now() - interval '1 second' where run_id = $1`,
          [runId],
        );
        await tx.query(`select pg_notify('pier_workflows', 'ready')`);
      });
      await new Promise((ok) => setTimeout(ok, 100));
    }
    expect(at('/late')).toHaveLength(1);
    const run = (await api.get(`/workflows/runs/${runId}`)).json();
    expect(run.stepStates.call).toMatchObject({ status: 'running', attempts: 1, crashRecoveries: 0 });
    await api.post(`/workflows/runs/${runId}/cancel`);
    hang.delete('/late');
  });

  it('retry settings: 408 retried by default, nonRetryableStatuses and nonRetryableErrors fail at once', async () => {
    script.set('/r408', [408]);
    script.set('/r503', [503, 503]);
    const id = await create({
      slug: 'retry-settings',
      steps: [
        { id: 'a', type: 'http', url: `${siteUrl}/r408`, retry: { backoffMs: 10 } },
        {
          id: 'b',
          type: 'http',
          url: `${siteUrl}/r503`,
          dependsOn: ['a'],
          retry: { backoffMs: 10, backoffCoefficient: 3, maxBackoffMs: 20, nonRetryableStatuses: [503] },
        },
      ],
    });
    const run = await until(await start(id), finished);
    expect(run.status).toBe('failed');
    expect(run.stepStates.a).toMatchObject({ status: 'completed', attempts: 2 });
    expect(run.stepStates.b).toMatchObject({ status: 'failed', attempts: 1 });
    expect(at('/r503')).toHaveLength(1);

    const cid = await create({
      slug: 'retry-errors',
      steps: [
        {
          id: 'c',
          type: 'http',
          url: `${siteUrl}/r503`,
          retry: { backoffMs: 10, nonRetryableErrors: ['HTTP 503'] },
        },
      ],
    });
    const crun = await until(await start(cid), finished);
    expect(crun.stepStates.c).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('continueOnError: the run goes on and a condition branches on the error', async () => {
    script.set('/charge', [402]);
    script.set('/loop/1', [404]);
    const id = await create({
      slug: 'continue',
      steps: [
        { id: 'charge', type: 'http', method: 'POST', url: `${siteUrl}/charge`, continueOnError: true },
        {
          id: 'ok',
          type: 'condition',
          expression: '$not($exists(steps.charge.output.error))',
          dependsOn: ['charge'],
          whenTrue: ['thanks'],
          whenFalse: ['dunning'],
        },
        { id: 'thanks', type: 'transform', expression: '"thanks"', dependsOn: ['ok'] },
        {
          id: 'dunning',
          type: 'transform',
          expression: 'steps.charge.output.error.status',
          dependsOn: ['ok'],
        },
        {
          id: 'each',
          type: 'loop',
          items: '[0,1,2]',
          steps: [{ id: 'get', type: 'http', url: `${siteUrl}/loop/{{item}}`, continueOnError: true }],
        },
      ],
    });
    const run = await until(await start(id), finished);
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(run.output.charge.error).toMatchObject({ status: 402, attempts: 1 });
    expect(run.output.charge.error.message).toContain('HTTP 402');
    expect(run.stepStates.charge.lastError).toContain('HTTP 402');
    expect(run.stepStates.thanks.status).toBe('skipped');
    expect(run.output.dunning).toBe(402);
    expect(run.output.each[1].get.error.status).toBe(404);
    expect(run.output.each[2].get.status).toBe(200);
  });

  it('a run started twice with one Idempotency-Key is one run', async () => {
    const id = await create({ slug: 'idem', steps: [{ id: 'x', type: 'transform', expression: '1' }] });
    const body = { projectSlug: slug };
    const r1 = await t.v1('POST', `/workflows/${id}/run`, a.live, body, { 'idempotency-key': 'order-42' });
    const r2 = await t.v1('POST', `/workflows/${id}/run`, a.live, body, { 'idempotency-key': 'order-42' });
    expect(r1.statusCode).toBe(201);
    expect(r2.statusCode).toBe(201);
    expect(r2.headers['idempotent-replayed']).toBe('true');
    expect(r2.json().id).toBe(r1.json().id);
    const list = (await api.get('/workflows/runs', { projectSlug: slug, workflowId: id })).json();
    expect(list.total).toBe(1);
    const other = await t.v1(
      'POST',
      `/workflows/${id}/run`,
      a.live,
      { ...body, variables: {}, metadata: { n: 2 } },
      {
        'idempotency-key': 'order-42',
      },
    );
    expect(other.statusCode).toBe(409);
  });
});
