import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { expectJobRoutesSecured, webdataTestApp } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';
import type { ManualClock } from '../../core/clock.ts';
import { tickSchedules } from './schedules.ts';
import { webdataScheduleRuns } from './tables.ts';

// Managing schedules: the list (cursor pages, filters, tenants), run now (queued, paused schedules too,
// one at a time), pause/resume, 5-minute intervals, and a first run that failed leaving the baseline to the
// next run, through the API with the job worker running.

describe('web data schedules: list, run now, pause, intervals', { timeout: 120_000 }, () => {
  let t: TestApp;
  let site: Site;
  let a: V1Tenant;

  beforeAll(async () => {
    site = await startSite({ articles: 2 });
    t = await webdataTestApp({ WEBDATA_FETCH_TIMEOUT_MS: '3000' });
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  const create = async (body: Record<string, unknown>, key = a.live) => {
    const res = await t.v1('POST', '/webdata/schedules', key, {
      name: 'S',
      url: `${site.url}/about`,
      type: 'extraction',
      ...body,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const runs = async (id: string) => (await t.v1('GET', `/webdata/schedules/${id}/runs`, a.live)).json();
  const runSettled = async (id: string, runId: string) => {
    for (let i = 0; i < 1200; i++) {
      const run = (await runs(id)).items.find((r: { id: string }) => r.id === runId);
      if (run && run.status !== 'processing') return run;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the run did not finish');
  };

  it('lists schedules newest first in cursor pages, filtered, and only the caller’s own', async () => {
    const clock = t.clock as ManualClock;
    const made: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      made.push((await create({ name, type: name === 'two' ? 'screenshot' : 'extraction' })).id);
      clock.advance(1000);
    }
    await t.v1('POST', `/webdata/schedules/${made[0]}/pause`, a.live);
    const other = await seedV1Tenant(t.deps);
    await create({ name: 'theirs' }, other.live);

    const first = await t.v1('GET', '/webdata/schedules?limit=2', a.live);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().items.map((s: { name: string }) => s.name)).toEqual(['three', 'two']);
    expect(first.json().items[0]).toMatchObject({
      frequency: 'daily',
      intervalMinutes: 1440,
      isActive: true,
    });
    const rest = (
      await t.v1('GET', `/webdata/schedules?limit=2&cursor=${first.json().nextCursor}`, a.live)
    ).json();
    expect(rest.items.map((s: { name: string }) => s.name)).toEqual(['one']);
    expect(rest.nextCursor).toBeNull();

    const paused = (await t.v1('GET', '/webdata/schedules?isActive=false', a.live)).json();
    expect(paused.items.map((s: { id: string }) => s.id)).toEqual([made[0]]);
    const shots = (await t.v1('GET', '/webdata/schedules?type=screenshot', a.live)).json();
    expect(shots.items.map((s: { id: string }) => s.id)).toEqual([made[1]]);
    // The owner's sandbox key sees none of the live schedules; the other organization sees only its own.
    expect((await t.v1('GET', '/webdata/schedules', a.test)).json().items).toEqual([]);
    const theirs = (await t.v1('GET', '/webdata/schedules', other.live)).json();
    expect(theirs.items.map((s: { name: string }) => s.name)).toEqual(['theirs']);
    // A cursor of another tenant's list is refused, not followed.
    const theirCursor = (await t.v1('GET', '/webdata/schedules?limit=1', a.live)).json().nextCursor;
    const foreign = await t.v1('GET', `/webdata/schedules?cursor=${theirCursor}`, other.live);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error.code).toBe('INVALID_CURSOR');
    for (const q of ['limit=0', 'limit=101', 'isActive=yes', 'type=video', 'cursor=abc']) {
      const res = await t.v1('GET', `/webdata/schedules?${q}`, a.live);
      expect(res.statusCode, q).toBe(400);
    }
    for (const id of made) await t.v1('DELETE', `/webdata/schedules/${id}`, a.live);
  });

  it('runs a schedule now, paused or not, one run at a time', async () => {
    const s = await create({ frequency: 'weekly', detectChanges: true });
    const paused = await t.v1('POST', `/webdata/schedules/${s.id}/pause`, a.live);
    expect(paused.json()).toMatchObject({ id: s.id, isActive: false });
    // Idempotent: pausing twice leaves it paused (toggle would have turned it back on).
    expect((await t.v1('POST', `/webdata/schedules/${s.id}/pause`, a.live)).json().isActive).toBe(false);

    const res = await t.v1('POST', `/webdata/schedules/${s.id}/run`, a.live);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'processing', trigger: 'manual' });
    const run = await runSettled(s.id, res.json().id);
    expect(run).toMatchObject({ status: 'completed', trigger: 'manual', baseline: true, changed: null });
    const x = (await t.v1('GET', `/webdata/extractions/${run.resultId}`, a.live)).json();
    expect(x.status).toBe('completed');
    // Paused: the tick does not run it.
    await tickSchedules(t.deps);
    expect((await runs(s.id)).items).toHaveLength(1);

    const resumed = await t.v1('POST', `/webdata/schedules/${s.id}/resume`, a.live);
    expect(resumed.json()).toMatchObject({ isActive: true });
    expect((await t.v1('POST', `/webdata/schedules/${s.id}/resume`, a.live)).json().isActive).toBe(true);
    // Resumed: the week's slot runs, beside the manual run (which did not take the slot), and compares
    // with the manual run's text.
    await tickSchedules(t.deps);
    const list = (await runs(s.id)).items;
    expect(list).toHaveLength(2);
    expect(list.map((r: { trigger: string }) => r.trigger).sort()).toEqual(['manual', 'schedule']);
    const scheduled = list.find((r: { trigger: string }) => r.trigger === 'schedule');
    expect(scheduled).toMatchObject({ status: 'completed', baseline: false, changed: false, changeScore: 0 });

    // A run in progress (here: left by a worker) makes a second "run now" a 409.
    await t.deps.db.orm.insert(webdataScheduleRuns).values({
      scheduleId: s.id,
      slot: new Date(t.clock.now().getTime() + 1),
      trigger: 'manual',
      status: 'processing',
      startedAt: t.clock.now(),
    });
    const busy = await t.v1('POST', `/webdata/schedules/${s.id}/run`, a.live);
    expect(busy.statusCode).toBe(409);
    expect(busy.json().error.code).toBe('SCHEDULE_RUN_IN_PROGRESS');

    await expectJobRoutesSecured(t, a, 'SCHEDULE_NOT_FOUND', [
      ['GET', `/webdata/schedules/${s.id}`],
      ['POST', `/webdata/schedules/${s.id}/run`],
      ['POST', `/webdata/schedules/${s.id}/pause`],
      ['POST', `/webdata/schedules/${s.id}/resume`],
    ]);
    for (const path of ['run', 'pause', 'resume']) {
      const res = await t.v1('POST', `/webdata/schedules/not-a-uuid/${path}`, a.live);
      expect(res.statusCode, path).toBe(404);
    }
    expect((await t.v1('GET', `/webdata/schedules/${s.id}`, a.live)).json().isActive).toBe(true);
    await t.v1('DELETE', `/webdata/schedules/${s.id}`, a.live);
  });

  it('runs every 5 minutes with intervalMinutes, once per 5-minute slot', async () => {
    const clock = t.clock as ManualClock;
    const s = await create({ intervalMinutes: 5 });
    expect(s).toMatchObject({ frequency: 'interval', intervalMinutes: 5 });
    // Start from the beginning of a 5-minute slot so the steps below stay inside or cross slots as meant.
    clock.advance(300_000 - (clock.now().getTime() % 300_000));
    await tickSchedules(t.deps);
    clock.advance(4 * 60_000);
    await tickSchedules(t.deps);
    expect((await runs(s.id)).items).toHaveLength(1);
    clock.advance(60_000);
    await tickSchedules(t.deps);
    const list = (await runs(s.id)).items;
    expect(list).toHaveLength(2);
    expect(new Date(list[0].slot).getTime() - new Date(list[1].slot).getTime()).toBe(300_000);
    await t.v1('DELETE', `/webdata/schedules/${s.id}`, a.live);
  });

  it('refuses intervals under 5 minutes and a frequency that disagrees with intervalMinutes', async () => {
    const ok = { name: 'x', url: site.url, type: 'extraction' };
    for (const body of [
      { ...ok, intervalMinutes: 4 },
      { ...ok, intervalMinutes: 10_081 },
      { ...ok, intervalMinutes: 7.5 },
      { ...ok, frequency: 'daily', intervalMinutes: 30 },
      { ...ok, frequency: 'interval' },
    ]) {
      const res = await t.v1('POST', '/webdata/schedules', a.live, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('a first run that failed leaves the baseline to the next run, which says so', async () => {
    const clock = t.clock as ManualClock;
    const s = await create({ url: `${site.url}/later`, frequency: 'hourly', detectChanges: true });
    await tickSchedules(t.deps);
    let list = (await runs(s.id)).items;
    expect(list[0]).toMatchObject({ status: 'failed', error: 'HTTP status: the page answered 404.' });

    site.setPage(
      '/later',
      '<html><body><main><p>The first version of this page, with its words.</p></main></body></html>',
    );
    clock.advance(3600_000);
    await tickSchedules(t.deps);
    list = (await runs(s.id)).items;
    expect(list[0]).toMatchObject({ status: 'completed', baseline: true, changed: null, changeScore: null });

    site.setPage(
      '/later',
      '<html><body><main><p>A second version, rewritten from top to bottom.</p></main></body></html>',
    );
    clock.advance(3600_000);
    await tickSchedules(t.deps);
    list = (await runs(s.id)).items;
    expect(list[0]).toMatchObject({ status: 'completed', baseline: false, changed: true });
    expect(list[0].diff).toContain('+A second version');
    await t.v1('DELETE', `/webdata/schedules/${s.id}`, a.live);
  });
});
