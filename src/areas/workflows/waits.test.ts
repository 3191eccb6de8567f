import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { expectError } from '../../../test/security.ts';
import { seedMember, seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { type V1Client, v1Client } from '../../../test/v1-client.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { finished, type Run, workflowKit } from '../../../test/workflows-kit.ts';
import { systemClock } from '../../core/clock.ts';

// Wait steps and concurrency as a user meets them: a sleep and a wait for an event that outlive a restart of
// Pier (the wait is rows and a queued job, not a timer), a timeout, an approval link that works once, an
// approval by API, and a concurrency key holding a second run for the same customer until the first ends.

describe('workflow waits and concurrency', { timeout: 180_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let b: V1Tenant;
  let api: V1Client;
  let other: V1Client;
  let slug: string;
  const env = { V1_RATE_LIMIT_BURST: '1000000', V1_RATE_LIMIT_PER_SEC: '100000' };

  beforeAll(async () => {
    // The real clock: a wait's due time is a run-at of the Postgres queue, which reads the database's time.
    t = await testApp({ background: true, persist: true, env, clock: systemClock });
    a = await seedV1Tenant(t.deps);
    b = await seedV1Tenant(t.deps);
    slug = (await seedProject(t.deps, a.org)).slug;
    api = v1Client(t, a.live);
    other = v1Client(t, b.live);
  }, 180_000);
  afterAll(async () => {
    await t.close();
  });

  const kit = workflowKit(
    () => api,
    () => slug,
  );
  const { create, get, until } = kit;
  // Here a run is started with variables only.
  const start = (id: string, variables: Record<string, unknown> = {}) => kit.start(id, { variables });
  const waiting = (step: string) => (r: Run) => r.stepStates[step]?.status === 'waiting';

  it('resumes a sleep and a wait for an event after Pier restarts', async () => {
    const sleeper = await create({
      slug: 'sleeper',
      steps: [
        { id: 'nap', type: 'wait', wait: { duration: '3s' } },
        { id: 'after', type: 'transform', expression: '"woke"', dependsOn: ['nap'] },
      ],
    });
    const listener = await create({
      slug: 'listener',
      variables: { orderId: { type: 'string', required: true } },
      steps: [
        {
          id: 'paid',
          type: 'wait',
          wait: { event: 'order.paid', match: 'event.payload.orderId = variables.orderId', timeout: '1h' },
        },
        {
          id: 'total',
          type: 'transform',
          expression: 'steps.paid.output.event.payload.total',
          dependsOn: ['paid'],
        },
      ],
    });
    const s = await start(sleeper);
    const l = await start(listener, { orderId: 'A1' });
    const napping = await until(s, waiting('nap'));
    expect(napping.status).toBe('running');
    expect(napping.stepStates.nap.wait.kind).toBe('sleep');
    expect(napping.stepStates.after.status).toBe('pending');
    expect((await until(l, waiting('paid'))).stepStates.paid.wait).toMatchObject({
      kind: 'event',
      event: 'order.paid',
    });

    t = await t.restart();
    api = v1Client(t, a.live);
    other = v1Client(t, b.live);

    // Another order's event does not match; another organization's event with the same name is not seen.
    const wrong = (
      await api.post('/workflows/events', { name: 'order.paid', payload: { orderId: 'B2', total: 1 } })
    ).json();
    expect(wrong.resumedWaits).toBe(0);
    const foreign = (
      await other.post('/workflows/events', { name: 'order.paid', payload: { orderId: 'A1', total: 2 } })
    ).json();
    expect(foreign.resumedWaits).toBe(0);
    expect((await get(l)).stepStates.paid.status).toBe('waiting');
    const right = (
      await api.post('/workflows/events', { name: 'order.paid', payload: { orderId: 'A1', total: 42 } })
    ).json();
    expect(right.resumedWaits).toBe(1);
    const listened = await until(l, finished);
    expect(listened.status).toBe('completed');
    expect(listened.output.total).toBe(42);

    const slept = await until(s, finished);
    expect(slept.status).toBe('completed');
    expect(slept.output.after).toBe('woke');
    expect(new Date(slept.output.nap.resumedAt).getTime()).toBeGreaterThanOrEqual(
      new Date(napping.stepStates.nap.startedAt).getTime() + 3000,
    );
  });

  it('takes an event sent after the run started but before its wait began, once per wait', async () => {
    const id = await create({
      slug: 'early-bird',
      variables: { orderId: { type: 'string', required: true } },
      steps: [
        { id: 'ok', type: 'wait', wait: { approval: {} } },
        {
          id: 'paid',
          type: 'wait',
          wait: { event: 'invoice.paid', match: 'event.payload.orderId = variables.orderId' },
          dependsOn: ['ok'],
        },
        { id: 'again', type: 'wait', wait: { event: 'invoice.paid' }, dependsOn: ['paid'] },
      ],
    });
    const send = async (payload: Record<string, unknown>) =>
      (await api.post('/workflows/events', { name: 'invoice.paid', payload })).json();
    await send({ orderId: 'A1', n: 0 }); // before the run: not the run's
    await new Promise((ok) => setTimeout(ok, 5));
    const runId = await start(id, { orderId: 'A1' });
    await until(runId, waiting('ok'));
    expect((await send({ orderId: 'B2', n: 1 })).resumedWaits).toBe(0);
    expect((await send({ orderId: 'A1', n: 2 })).resumedWaits).toBe(0); // nobody waits for it yet
    await api.post(`/workflows/runs/${runId}/approvals/ok`, { approved: true });
    // The wait begins and finds the stored event at once; the next wait does not take the same event again,
    // but the first stored one after the run started that it matches (n 1: it has no match).
    const r = await until(runId, (x) => x.stepStates.again?.status === 'completed');
    expect(r.stepStates.paid.status).toBe('completed');
    expect(r.output.paid.event.payload).toEqual({ orderId: 'A1', n: 2 });
    expect(r.output.again.event.payload).toEqual({ orderId: 'B2', n: 1 });
    expect(r.status).toBe('completed');
    // Another organization's stored event is never seen.
    const third = await start(id, { orderId: 'C3' });
    await other.post('/workflows/events', { name: 'invoice.paid', payload: { orderId: 'C3' } });
    await until(third, waiting('ok'));
    await api.post(`/workflows/runs/${third}/approvals/ok`, { approved: true });
    expect((await until(third, waiting('paid'))).stepStates.paid.status).toBe('waiting');
    await api.post(`/workflows/runs/${third}/cancel`);
  });

  it('fails a wait for an event at its timeout, or goes on with onTimeout continue', async () => {
    const id = await create({
      slug: 'impatient',
      steps: [{ id: 'w', type: 'wait', wait: { event: 'never.comes', timeout: '1s' } }],
    });
    const failed = await until(await start(id), finished);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe("Step 'w' failed: Timed out after 1 s waiting for event 'never.comes'.");
    const calm = await create({
      slug: 'calm',
      steps: [{ id: 'w', type: 'wait', wait: { approval: {}, timeout: '1s', onTimeout: 'continue' } }],
    });
    const done = await until(await start(calm), finished);
    expect(done.status).toBe('completed');
    expect(done.output.w).toEqual({ timedOut: true });
  });

  it('takes an approval link once; a second use and a forged link are refused', async () => {
    const id = await create({
      slug: 'approve',
      steps: [
        { id: 'ok', type: 'wait', wait: { approval: { message: 'Send invoice 42?' } } },
        { id: 'send', type: 'transform', expression: '"sent"', dependsOn: ['ok'] },
      ],
    });
    const runId = await start(id);
    const w = await until(runId, waiting('ok'));
    const link = new URL(w.stepStates.ok.wait.approvalUrl).pathname;
    const page = await t.app.inject({ method: 'GET', url: link });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Send invoice 42?');
    expect((await get(runId)).stepStates.ok.status).toBe('waiting'); // a GET (a link scanner) decides nothing
    const yes = await t.app.inject({
      method: 'POST',
      url: link,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'decision=approve&comment=looks+good',
    });
    expect(yes.statusCode, yes.body).toBe(200);
    const again = await t.app.inject({ method: 'POST', url: link, payload: { approved: false } });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('WORKFLOW_APPROVAL_USED');
    const done = await until(runId, finished);
    expect(done.status).toBe('completed');
    expect(done.output.ok).toMatchObject({ approved: true, by: 'link', comment: 'looks good' });
    expect(done.stepStates.ok.wait.approvalUrl).toBeNull();
    const forged = await t.app.inject({ method: 'POST', url: `${link.slice(0, -4)}AAAA`, payload: {} });
    expect(forged.statusCode).toBe(404);
    expect(forged.json().error.code).toBe('WORKFLOW_APPROVAL_NOT_FOUND');

    // By API: another organization gets a 404; a rejection fails the step with the comment.
    const second = await start(id);
    await until(second, waiting('ok'));
    expect((await other.post(`/workflows/runs/${second}/approvals/ok`, { approved: true })).statusCode).toBe(
      404,
    );
    expect(
      (await api.post(`/workflows/runs/${second}/approvals/send`, { approved: true })).json().error.code,
    ).toBe('WORKFLOW_STEP_NOT_WAITING');
    const no = await api.post(`/workflows/runs/${second}/approvals/ok`, {
      approved: false,
      comment: 'wrong amount',
    });
    expect(no.statusCode, no.body).toBe(200);
    const rejected = await until(second, finished);
    expect(rejected.status).toBe('failed');
    expect(rejected.error).toBe("Step 'ok' failed: Rejected (by an API call): wrong amount");
    expect((await api.post(`/workflows/runs/${second}/approvals/ok`, { approved: true })).statusCode).toBe(
      409,
    );

    // A rejection is a step failing like any other: with continueOnError the run goes on and can branch.
    const lenient = await create({
      slug: 'lenient',
      steps: [
        { id: 'ok', type: 'wait', wait: { approval: {} }, continueOnError: true },
        {
          id: 'yes',
          type: 'condition',
          expression: '$not($exists(steps.ok.output.error))',
          dependsOn: ['ok'],
        },
        { id: 'after', type: 'transform', expression: 'steps.ok.output.error.message', dependsOn: ['yes'] },
      ],
    });
    const third = await start(lenient);
    await until(third, waiting('ok'));
    await api.post(`/workflows/runs/${third}/approvals/ok`, { approved: false, comment: 'not now' });
    const went = await until(third, finished);
    expect(went.status).toBe('completed');
    expect(went.stepStates.ok).toMatchObject({
      status: 'completed',
      lastError: 'Rejected (by an API call): not now',
    });
    expect(went.output.yes).toBe(false);
    expect(went.output.after).toBe('Rejected (by an API call): not now');
  });

  it('holds a second run with the same concurrency key until the first ends, and limits the start rate', async () => {
    const id = await create({
      slug: 'per-customer',
      variables: { customer: { type: 'string', required: true } },
      steps: [{ id: 'ok', type: 'wait', wait: { approval: {} } }],
      limits: {
        concurrency: { key: 'variables.customer', limit: 1 },
        rateLimit: { limit: 3, periodSeconds: 3600 },
      },
    });
    const first = await start(id, { customer: 'c1' });
    const second = await start(id, { customer: 'c1' });
    const third = await start(id, { customer: 'c2' });
    await until(first, waiting('ok'));
    await until(third, waiting('ok'));
    const held = await get(second);
    expect(held).toMatchObject({ status: 'pending', queued: true, concurrencyKey: 'c1' });
    expect(held.stepStates.ok.status).toBe('pending');
    const limited = await api.post(`/workflows/${id}/run`, {
      projectSlug: slug,
      variables: { customer: 'c3' },
    });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('WORKFLOW_RATE_LIMITED');
    expect(limited.headers['retry-after']).toBeDefined();

    await api.post(`/workflows/runs/${first}/approvals/ok`, { approved: true });
    expect((await until(first, finished)).status).toBe('completed');
    const released = await until(second, waiting('ok'));
    expect(released.queued).toBe(false);
    for (const r of [second, third]) await api.post(`/workflows/runs/${r}/cancel`);
  });

  it("shows the run page a step's definition, output preview and whole output, waits and trigger history", async () => {
    const id = await create({
      slug: 'page',
      steps: [
        { id: 'big', type: 'transform', expression: '$pad("", 10000, "x")' },
        { id: 'ok', type: 'wait', wait: { approval: {} }, dependsOn: ['big'] },
      ],
      triggers: { events: [{ name: 'page.go' }] },
    });
    const runId = (await api.post('/workflows/events', { name: 'page.go', payload: {} })).json().runs[0]
      .runId;
    await until(runId, waiting('ok'));
    const member = await seedMember(t.deps, a.org.id, 'member');
    const base = { orgSlug: a.org.slug, environment: 'production' };
    const view = (await t.call('getWorkflowRunViewForCli', { ...base, runId }, member.token)).json();
    const big = view.stepDetails.find((d: Run) => d.id === 'big');
    expect(big.definition).toMatchObject({ type: 'transform', expression: '$pad("", 10000, "x")' });
    expect(big.outputTruncated).toBe(true);
    expect(big.outputPreview).toHaveLength(4000);
    expect(big.outputBytes).toBe(10002);
    expect(view.run.stepStates.ok.wait.approvalUrl).toContain('/workflows/approvals/');
    expect(view.run.trigger).toMatchObject({ type: 'event', ref: 'page.go' });
    const whole = await t.call(
      'getWorkflowStepOutputForCli',
      { ...base, runId, stepId: 'big' },
      member.token,
    );
    expect(whole.json().output).toBe('x'.repeat(10000));
    expectError(
      await t.call(
        'getWorkflowStepOutputForCli',
        { orgSlug: b.org.slug, environment: 'production', runId, stepId: 'big' },
        b.owner.token,
      ),
      404,
      'WORKFLOW_RUN_NOT_FOUND',
    );
    const list = (await t.call('listWorkflowsForCli', base, member.token)).json();
    const item = list.items.find((w: Run) => w.id === id);
    expect(item.triggerHistory.events[0].lastFires[0]).toMatchObject({ outcome: 'started', runId });
    await api.post(`/workflows/runs/${runId}/cancel`);
  });
});
