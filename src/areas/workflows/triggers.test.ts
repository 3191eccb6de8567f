import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { type V1Client, v1Client } from '../../../test/v1-client.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { ManualClock } from '../../core/clock.ts';
import { tickTriggers } from './triggers/tick.ts';

// Triggers as a user sees them: a cron schedule firing on the test clock (its time zone, overlap policy and
// the one catch-up after downtime), an event starting every subscribed workflow whose filter passes, the
// signed inbound webhook, each trigger's history, bad definitions refused whole, and tenant isolation.

describe('workflow triggers', { timeout: 120_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let b: V1Tenant;
  let api: V1Client;
  let other: V1Client;
  let slug: string;
  let otherSlug: string;
  // 07:50 UTC is 08:50 in Oslo in December.
  const clock = new ManualClock(new Date('2026-12-07T07:50:00Z'));

  beforeAll(async () => {
    t = await testApp({
      clock,
      background: true,
      env: { V1_RATE_LIMIT_BURST: '1000000', V1_RATE_LIMIT_PER_SEC: '100000' },
    });
    a = await seedV1Tenant(t.deps);
    b = await seedV1Tenant(t.deps);
    slug = (await seedProject(t.deps, a.org)).slug;
    otherSlug = (await seedProject(t.deps, b.org)).slug;
    api = v1Client(t, a.live);
    other = v1Client(t, b.live);
  }, 180_000);
  afterAll(async () => {
    await t.close();
  });

  const create = async (body: Record<string, unknown>, client = api, project = slug) => {
    const r = await client.post('/workflows', { projectSlug: project, name: 'wf', ...body });
    expect(r.statusCode, r.body).toBe(201);
    return r.json() as Record<string, any>;
  };
  const runsOf = async (workflowId: string) =>
    (await api.get('/workflows/runs', { projectSlug: slug, workflowId })).json().items as Record<
      string,
      any
    >[];
  const approval = { id: 'ok', type: 'wait', wait: { approval: {} } };

  it('refuses bad crons, zones and expressions in one 400 naming each', async () => {
    const r = await api.post('/workflows', {
      projectSlug: slug,
      slug: 'bad-triggers',
      name: 'bad',
      steps: [{ id: 'w', type: 'wait', wait: { duration: '5 minutes' } }],
      triggers: {
        schedules: [
          { cron: '61 * * * *' },
          { cron: '0 9 * * *', timezone: 'Mars/Olympus' },
          { cron: '0 0 30 2 *' },
        ],
        events: [{ name: 'order.paid', filter: 'payload.total >' }],
      },
      limits: { concurrency: { key: '$$$(' } },
    });
    expect(r.statusCode).toBe(400);
    const { code, message } = r.json().error;
    expect(code).toBe('WORKFLOW_INVALID');
    expect(message).toContain('triggers.schedules[0].cron: minute 61 is outside 0-59');
    expect(message).toContain("triggers.schedules[1].timezone: 'Mars/Olympus' is not an IANA time zone");
    expect(message).toContain("triggers.schedules[2].cron: '0 0 30 2 *' never fires");
    expect(message).toContain('triggers.events[0].filter: not a valid JSONata expression');
    expect(message).toContain('limits.concurrency.key: not a valid JSONata expression');
    expect(message).toContain("steps.w.wait.duration: '5 minutes' is not a duration");
    const bad = await api.post('/workflows/events', { name: 'has spaces', payload: {} });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_ERROR');
  });

  it('fires a cron slot once in its time zone, skips an overlapping slot, and catches up one missed slot', async () => {
    const wf = await create({
      slug: 'daily',
      variables: { region: { type: 'string', required: true } },
      steps: [approval],
      triggers: {
        schedules: [{ cron: '0 9 * * *', timezone: 'Europe/Oslo', variables: { region: 'north' } }],
      },
    });
    await tickTriggers(t.deps);
    expect(await runsOf(wf.id)).toHaveLength(0);
    clock.set(new Date('2026-12-07T08:00:20Z')); // 09:00:20 in Oslo
    await tickTriggers(t.deps);
    await tickTriggers(t.deps); // a second worker's tick in the same minute
    let runs = await runsOf(wf.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.trigger).toEqual({
      type: 'schedule',
      ref: '0 9 * * *@Europe/Oslo',
      slot: '2026-12-07T08:00:00.000Z',
    });
    expect(runs[0]!.variables).toEqual({ region: 'north' });

    // Next day the first run still waits for its approval: overlap skip records the slot, starts nothing.
    clock.set(new Date('2026-12-08T08:00:30Z'));
    await tickTriggers(t.deps);
    expect(await runsOf(wf.id)).toHaveLength(1);

    // Pier "down" for three days: one catch-up run for the latest slot, not three.
    await api.post(`/workflows/runs/${runs[0]!.id}/cancel`);
    clock.set(new Date('2026-12-11T10:00:00Z'));
    await tickTriggers(t.deps);
    runs = await runsOf(wf.id);
    expect(runs).toHaveLength(2);
    expect(runs[0]!.trigger.slot).toBe('2026-12-11T08:00:00.000Z');

    const view = (await api.get(`/workflows/${wf.id}/triggers`)).json();
    expect(view.schedules[0].nextRunAt).toBe('2026-12-12T08:00:00.000Z');
    expect(view.schedules[0].lastFires.map((f: any) => [f.slot, f.outcome])).toEqual([
      ['2026-12-11T08:00:00.000Z', 'started'],
      ['2026-12-08T08:00:00.000Z', 'skipped'],
      ['2026-12-07T08:00:00.000Z', 'started'],
    ]);
    expect(view.schedules[0].lastFires[0].runStatus).toMatch(/pending|running/);
    await api.post(`/workflows/runs/${runs[0]!.id}/cancel`);
    expect((await other.get(`/workflows/${wf.id}/triggers`)).statusCode).toBe(404);
  });

  it('queues an overlapping slot with overlap queue and drops missed slots without catch-up', async () => {
    clock.set(new Date('2026-12-14T12:00:30Z'));
    const wf = await create({
      slug: 'hourly-queue',
      steps: [approval],
      triggers: {
        schedules: [
          { cron: '0 * * * *', overlap: 'queue' },
          { cron: '30 * * * *', catchUp: false, overlap: 'allow' },
        ],
      },
    });
    clock.set(new Date('2026-12-14T13:00:10Z'));
    await tickTriggers(t.deps);
    clock.set(new Date('2026-12-14T14:00:10Z'));
    await tickTriggers(t.deps);
    const runs = await runsOf(wf.id);
    expect(runs.map((r) => r.queued)).toEqual([true, false]); // newest first: the 14:00 run waits
    // Approving the first run lets the queued one start.
    const first = runs[1]!;
    const done = await api.post(`/workflows/runs/${first.id}/approvals/ok`, { approved: true });
    expect(done.statusCode, done.body).toBe(200);
    const second = (await api.get(`/workflows/runs/${runs[0]!.id}`)).json();
    expect(second.queued).toBe(false);
    expect(second.stepStates.ok.status).toBe('waiting');
    await api.post(`/workflows/runs/${second.id}/cancel`);
    // 12:30 and 13:30 passed without a tick and catchUp is false: each recorded as missed at the next
    // tick, no run.
    const view = (await api.get(`/workflows/${wf.id}/triggers`)).json();
    expect(view.schedules[1].lastFires.map((f: any) => [f.slot, f.outcome])).toEqual([
      ['2026-12-14T13:30:00.000Z', 'missed'],
      ['2026-12-14T12:30:00.000Z', 'missed'],
    ]);
  });

  it('starts every workflow subscribed to an event whose filter passes, in the caller organization only', async () => {
    const sub = (s: string, filter?: string) =>
      create({
        slug: s,
        variables: { orderId: { type: 'string', required: true }, total: { type: 'number' } },
        steps: [{ id: 'echo', type: 'transform', expression: 'variables.orderId & "!"' }],
        triggers: { events: [{ name: 'order.paid', ...(filter ? { filter } : {}) }] },
      });
    const all = await sub('on-paid');
    const big = await sub('on-big', 'payload.total > 100');
    const mapped = await create({
      slug: 'on-paid-mapped',
      variables: { id: { type: 'string', required: true } },
      steps: [{ id: 'echo', type: 'transform', expression: 'variables.id' }],
      triggers: { events: [{ name: 'order.paid', input: '{ "id": "o-" & payload.orderId }' }] },
    });
    const foreign = await create(
      { slug: 'theirs', steps: [], triggers: { events: [{ name: 'order.paid' }] } },
      other,
      otherSlug,
    );
    const small = (
      await api.post('/workflows/events', {
        name: 'order.paid',
        payload: { orderId: 'A1', total: 50, extra: 1 },
      })
    ).json();
    expect(small.runs.map((r: any) => r.workflowId).sort()).toEqual([all.id, mapped.id].sort());
    clock.advance(1000);
    const large = await api.post('/workflows/events', {
      name: 'order.paid',
      payload: { orderId: 'B2', total: 500 },
    });
    expect(large.statusCode, large.body).toBe(202);
    expect(
      large
        .json()
        .runs.map((r: any) => r.workflowId)
        .sort(),
    ).toEqual([all.id, big.id, mapped.id].sort());
    const bigRun = large.json().runs.find((r: any) => r.workflowId === big.id).runId;
    const done = await until(bigRun);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ echo: 'B2!' });
    expect(done.trigger).toMatchObject({ type: 'event', ref: 'order.paid' });
    const mappedRun = large.json().runs.find((r: any) => r.workflowId === mapped.id).runId;
    expect((await until(mappedRun)).output).toEqual({ echo: 'o-B2' });
    // The other organization's subscriber saw neither event; an event nobody listens to is fine.
    expect(
      (await other.get('/workflows/runs', { projectSlug: otherSlug, workflowId: foreign.id })).json().total,
    ).toBe(0);
    const nobody = await api.post('/workflows/events', { name: 'nobody.listens' });
    expect(nobody.statusCode).toBe(202);
    expect(nobody.json().runs).toEqual([]);
    // A payload missing a required variable is recorded, not started.
    clock.advance(1000);
    const missing = (
      await api.post('/workflows/events', { name: 'order.paid', payload: { total: 1 } })
    ).json();
    expect(missing.skipped.find((s: any) => s.workflowId === all.id).outcome).toBe('invalid');
    const view = (await api.get(`/workflows/${all.id}/triggers`)).json();
    expect(view.events[0].lastFires.map((f: any) => f.outcome)).toEqual(['invalid', 'started', 'started']);
  });

  const until = async (runId: string) => {
    const end = Date.now() + 60_000;
    for (;;) {
      const r = (await api.get(`/workflows/runs/${runId}`)).json();
      if (['completed', 'failed', 'cancelled'].includes(r.status)) return r;
      if (Date.now() > end) throw new Error(`run stuck: ${JSON.stringify(r)}`);
      await new Promise((ok) => setTimeout(ok, 50));
    }
  };

  it('starts a run from the signed inbound webhook; a forged or rotated URL is a 404', async () => {
    const wf = await create({
      slug: 'hooked',
      variables: { email: { type: 'string', required: true } },
      steps: [{ id: 'echo', type: 'transform', expression: 'variables.email' }],
      triggers: { webhook: { enabled: true } },
    });
    expect(wf.webhookUrl).toMatch(/\/workflows\/hooks\/[0-9a-f-]{36}\.[\w-]{22}$/);
    const path = new URL(wf.webhookUrl).pathname;
    const hit = await t.app.inject({ method: 'POST', url: path, payload: { email: 'a@b.test' } });
    expect(hit.statusCode, hit.body).toBe(202);
    expect((await until(hit.json().runId)).output).toEqual({ echo: 'a@b.test' });
    clock.advance(1000);
    const forged = await t.app.inject({ method: 'POST', url: `${path.slice(0, -3)}AAA`, payload: {} });
    expect(forged.statusCode).toBe(404);
    expect(forged.json().error.code).toBe('WORKFLOW_WEBHOOK_NOT_FOUND');
    const bad = await t.app.inject({ method: 'POST', url: path, payload: { email: 5 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('WORKFLOW_VARIABLES_INVALID');
    const rotated = (await api.post(`/workflows/${wf.id}/webhook/rotate`)).json();
    expect(rotated.webhookUrl).not.toBe(wf.webhookUrl);
    expect(
      (await t.app.inject({ method: 'POST', url: path, payload: { email: 'x@y.test' } })).statusCode,
    ).toBe(404);
    expect((await other.post(`/workflows/${wf.id}/webhook/rotate`)).statusCode).toBe(404);
    const view = (await api.get(`/workflows/${wf.id}/triggers`)).json();
    expect(view.webhook.url).toBe(rotated.webhookUrl);
    expect(view.webhook.lastFires.map((f: any) => f.outcome)).toEqual(['invalid', 'started']);
  });

  it('fires a schedule slot exactly once: a crash before its run is written leaves the slot to the next tick', async () => {
    const wf = await create({
      slug: 'hourly',
      steps: [approval],
      triggers: { schedules: [{ cron: '15 * * * *' }] },
    });
    const slot = new Date(Math.ceil(clock.now().getTime() / 3_600_000) * 3_600_000 + 15 * 60_000);
    clock.set(new Date(slot.getTime() + 10_000));
    // "The process dies" after claiming the slot, as it inserts the run: the database refuses the insert.
    await t.deps.db.query(`create function pier_test_die() returns trigger language plpgsql as $$
      begin raise exception 'process died'; end $$`);
    await t.deps.db.query(`create trigger pier_test_die before insert on workflow_runs for each row
      when (new.workflow_id = '${wf.id}') execute function pier_test_die()`);
    await tickTriggers(t.deps);
    const state = async () =>
      (await t.deps.db.query('select last_slot from workflow_schedules where workflow_id = $1', [wf.id]))
        .rows[0];
    expect(await state()).toEqual({ last_slot: null });
    expect(await runsOf(wf.id)).toHaveLength(0);
    await t.deps.db.query('drop trigger pier_test_die on workflow_runs');
    await t.deps.db.query('drop function pier_test_die');
    await tickTriggers(t.deps);
    await tickTriggers(t.deps);
    const runs = await runsOf(wf.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.trigger.slot).toBe(slot.toISOString());
    const view = (await api.get(`/workflows/${wf.id}/triggers`)).json();
    expect(view.schedules[0].lastFires.map((f: any) => f.outcome)).toEqual(['started']);
    await api.post(`/workflows/runs/${runs[0]!.id}/cancel`);
  });

  it('delivers a stored event a dead process left, starting each subscribed workflow once; old events are dropped', async () => {
    const wf = await create({
      slug: 'on-ship',
      steps: [approval],
      triggers: { events: [{ name: 'order.shipped' }] },
    });
    // Stored, then the process died before delivering it.
    const lost = crypto.randomUUID();
    await t.deps.db.query(
      `insert into workflow_events (id, org_id, environment, name, payload, received_at)
       values ($1, $2, 'production', 'order.shipped', '{}', $3)`,
      [lost, a.org.id, clock.now().toISOString()],
    );
    await tickTriggers(t.deps); // too fresh: the request that stored it may be delivering it now
    expect(await runsOf(wf.id)).toHaveLength(0);
    clock.advance(31_000);
    await tickTriggers(t.deps);
    let runs = await runsOf(wf.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.trigger).toMatchObject({ type: 'event', ref: 'order.shipped', eventId: lost });
    // Delivered, then the process died before marking it so: delivered again, nothing starts twice.
    const sent = (await api.post('/workflows/events', { name: 'order.shipped', payload: {} })).json();
    expect(sent.runs).toHaveLength(1);
    await t.deps.db.query('update workflow_events set triggers_done_at = null where id = $1', [sent.id]);
    clock.advance(31_000);
    await tickTriggers(t.deps);
    runs = await runsOf(wf.id);
    expect(runs).toHaveLength(2);
    const kept = async () =>
      (await t.deps.db.query('select id from workflow_events where id = any($1::uuid[])', [[lost, sent.id]]))
        .rows.length;
    expect(await kept()).toBe(2);
    clock.advance(25 * 3_600_000); // past WORKFLOW_EVENT_RETENTION_HOURS (24)
    await tickTriggers(t.deps);
    expect(await kept()).toBe(0);
    for (const r of runs) await api.post(`/workflows/runs/${r.id}/cancel`);
  });

  it('a run started by an event waits for the next event of that name, not the one that started it', async () => {
    const wf = await create({
      slug: 'two-step',
      steps: [{ id: 'again', type: 'wait', wait: { event: 'door.knock' } }],
      triggers: { events: [{ name: 'door.knock', filter: 'payload.first' }] },
    });
    // The test clock stands still: the event's time is the run's creation time.
    const first = (
      await api.post('/workflows/events', { name: 'door.knock', payload: { first: true } })
    ).json();
    expect(first.resumedWaits).toBe(0);
    const runId = first.runs[0].runId;
    const end = Date.now() + 30_000;
    let run: Record<string, any>;
    do {
      await new Promise((ok) => setTimeout(ok, 100));
      run = (await api.get(`/workflows/runs/${runId}`)).json();
    } while (run.stepStates.again.status !== 'waiting' && Date.now() < end);
    // The stored-events look has run (its job) and left it waiting.
    await new Promise((ok) => setTimeout(ok, 500));
    expect((await api.get(`/workflows/runs/${runId}`)).json().stepStates.again.status).toBe('waiting');
    const second = (await api.post('/workflows/events', { name: 'door.knock', payload: { n: 2 } })).json();
    expect(second.resumedWaits).toBe(1);
    const done = await until(runId);
    expect(done.output.again.event.payload).toEqual({ n: 2 });
    expect(wf.id).toBeTruthy();
  });
});
