import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import { type TestApp, testApp } from './harness.ts';
import { hasVector } from './memory-kit.ts';
import { seedApiKey, seedOrg } from './seed.ts';
import {
  seedAssetOn,
  seedConnectionOn,
  seedExtractionOn,
  seedMailOn,
  seedMemoryOn,
  seedRunOn,
} from './usage-seed.ts';

// Usage over time (issue 39): per-day counts of mail, workflow runs and web pages fetched for the dashboard's
// charts, one entry per UTC day (zeros included), only the caller's organization.

let t: TestApp;
const NOW = new Date('2026-12-07T15:00:00Z');
beforeAll(async () => {
  t = await testApp({ clock: new ManualClock(NOW.getTime()) });
});
afterAll(async () => {
  await t?.close();
});

type Day = Record<string, number | string> & { day: string };
const days = (r: { json(): unknown }) => (r.json() as { days: Day[] }).days;

describe('usage by day', () => {
  it("counts each day of the caller's organization and fills the rest with zeros", async () => {
    const { org, owner } = await seedOrg(t.deps);
    const other = await seedOrg(t.deps);
    await seedMailOn(t.deps, org.id, '2026-12-05', 'delivered', 3);
    await seedMailOn(t.deps, org.id, '2026-12-05', 'bounced');
    await seedMailOn(t.deps, org.id, '2026-12-07', 'sent', 2);
    await seedMailOn(t.deps, other.org.id, '2026-12-05', 'delivered', 5);
    await seedMailOn(t.deps, org.id, '2026-11-01', 'delivered'); // before the window
    await seedRunOn(t.deps, org.id, '2026-12-06', 1.5);
    await seedRunOn(t.deps, org.id, '2026-12-06', 0.25, 'failed');
    await seedExtractionOn(t.deps, org.id, '2026-12-07', 4);

    const mail = days(await t.call('getMailUsageByDayForCli', { orgSlug: org.slug, days: 7 }, owner.token));
    expect(mail.map((d) => d.day)).toEqual([
      '2026-12-01',
      '2026-12-02',
      '2026-12-03',
      '2026-12-04',
      '2026-12-05',
      '2026-12-06',
      '2026-12-07',
    ]);
    expect(mail[4]).toEqual({ day: '2026-12-05', accepted: 4, sent: 0, delivered: 3, bounced: 1, failed: 0 });
    expect(mail[6]).toMatchObject({ accepted: 2, sent: 2 });
    expect(mail.reduce((n, d) => n + Number(d.accepted), 0)).toBe(6);

    const runs = days(
      await t.call('getWorkflowUsageByDayForCli', { orgSlug: org.slug, days: 7 }, owner.token),
    );
    expect(runs[5]).toEqual({ day: '2026-12-06', runs: 2, failed: 1, credits: 1.75 });
    const web = days(await t.call('getWebDataUsageByDayForCli', { orgSlug: org.slug, days: 7 }, owner.token));
    expect(web[6]).toEqual({ day: '2026-12-07', extractions: 4, crawlPages: 0 });
    // Thirty days by default.
    expect(days(await t.call('getMailUsageByDayForCli', { orgSlug: org.slug }, owner.token))).toHaveLength(
      30,
    );
  });

  it("counts the organization's v1 API requests and errors by day", async () => {
    const { org, owner } = await seedOrg(t.deps);
    const other = await seedOrg(t.deps);
    const { key } = await seedApiKey(t.deps, org.id, 'test');
    const theirs = await seedApiKey(t.deps, other.org.id, 'test');
    for (let i = 0; i < 3; i++) expect((await t.v1('GET', '/mail/emails', key)).statusCode).toBe(200);
    expect((await t.v1('GET', '/mail/emails/not-an-id', key)).statusCode).toBeGreaterThanOrEqual(400);
    await t.v1('GET', '/mail/emails', theirs.key);
    await t.v1('GET', '/mail/emails', 'sk_test.nobody.nothing'); // refused: no organization to count for
    const api = days(await t.call('getApiUsageByDayForCli', { orgSlug: org.slug, days: 2 }, owner.token));
    expect(api).toEqual([
      { day: '2026-12-06', requests: 0, errors: 0 },
      { day: '2026-12-07', requests: 4, errors: 1 },
    ]);
    // Counted once: a second read adds nothing.
    const again = days(await t.call('getApiUsageByDayForCli', { orgSlug: org.slug, days: 1 }, owner.token));
    expect(again).toEqual([{ day: '2026-12-07', requests: 4, errors: 1 }]);
  });

  it('charts memories stored and changed, asset bytes by type and connections made, per day', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const other = await seedOrg(t.deps);
    await seedAssetOn(t.deps, org.id, '2026-12-06', 'image', 1000);
    await seedAssetOn(t.deps, org.id, '2026-12-06', 'image', 500);
    await seedAssetOn(t.deps, org.id, '2026-12-06', 'video', 2_000_000);
    await seedAssetOn(t.deps, org.id, '2026-12-07', 'document', 40);
    await seedAssetOn(t.deps, org.id, '2026-12-07', 'image', 9999, 'pending'); // unverified: not counted
    await seedAssetOn(t.deps, other.org.id, '2026-12-07', 'image', 7777);
    const cdn = days(await t.call('getCdnUsageByDayForCli', { orgSlug: org.slug, days: 2 }, owner.token));
    expect(cdn).toEqual([
      { day: '2026-12-06', image: 1500, video: 2_000_000, audio: 0, document: 0, other: 0 },
      { day: '2026-12-07', image: 0, video: 0, audio: 0, document: 40, other: 0 },
    ]);

    await seedConnectionOn(t.deps, org.id, '2026-12-05');
    await seedConnectionOn(t.deps, org.id, '2026-12-05', 'error');
    await seedConnectionOn(t.deps, other.org.id, '2026-12-05');
    const conns = days(
      await t.call('getIntegrationUsageByDayForCli', { orgSlug: org.slug, days: 3 }, owner.token),
    );
    expect(conns[0]).toEqual({ day: '2026-12-05', connected: 1, other: 1 });
    expect(conns.slice(1).every((d) => d.connected === 0 && d.other === 0)).toBe(true);

    const memory = await t.call('getMemoryUsageByDayForCli', { orgSlug: org.slug, days: 3 }, owner.token);
    if (!hasVector(t)) {
      // Memory is off without pgvector: the chart says so, as the memory page does.
      expect(memory.statusCode).toBe(503);
      expect(memory.json().error.code).toBe('VECTOR_EXTENSION_MISSING');
      return;
    }
    await seedMemoryOn(t.deps, org.id, '2026-12-05', '2026-12-07', 2);
    await seedMemoryOn(t.deps, org.id, '2026-12-07');
    await seedMemoryOn(t.deps, other.org.id, '2026-12-07', '2026-12-07', 3);
    expect(
      days(await t.call('getMemoryUsageByDayForCli', { orgSlug: org.slug, days: 3 }, owner.token)),
    ).toEqual([
      { day: '2026-12-05', stored: 1, changed: 0 },
      { day: '2026-12-06', stored: 0, changed: 0 },
      { day: '2026-12-07', stored: 1, changed: 2 },
    ]);
  });

  it('answers 404 for another organization and 400 for a bad range', async () => {
    const { owner } = await seedOrg(t.deps);
    const other = await seedOrg(t.deps);
    for (const name of [
      'getApiUsageByDayForCli',
      'getMailUsageByDayForCli',
      'getWorkflowUsageByDayForCli',
      'getWebDataUsageByDayForCli',
      'getCdnUsageByDayForCli',
      'getIntegrationUsageByDayForCli',
      ...(hasVector(t) ? ['getMemoryUsageByDayForCli'] : []),
    ]) {
      const theirs = await t.call(name, { orgSlug: other.org.slug }, owner.token);
      expect(theirs.statusCode, name).toBe(404);
      expect(theirs.json().error.code).toBe('ORG_NOT_FOUND');
      for (const bad of [0, 91, 1.5, 'x'])
        expect((await t.call(name, { orgSlug: other.org.slug, days: bad }, owner.token)).statusCode).toBe(
          400,
        );
    }
  });
});
