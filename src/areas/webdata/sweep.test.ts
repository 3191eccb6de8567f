import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { settled, webdataTestApp } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';
import type { ManualClock } from '../../core/clock.ts';
import { runBatch } from './batches.ts';
import { runCrawl } from './crawl.ts';
import { slotOf, tickSchedules } from './schedules.ts';
import { BATCH_GAVE_UP, CRAWL_INTERRUPTED, MAX_RESUMES, STALE_MS, sweepInterrupted } from './sweep.ts';
import { webdataBatches, webdataBatchItems, webdataCrawlPages, webdataCrawls } from './tables.ts';

// Work a worker left behind when it died, simulated by the rows it leaves (no process is killed): a batch
// or crawl still `processing` with a stale heartbeat. Batches resume where they were, crawls fail with a
// reason and keep their pages, live work is left alone; and a schedule whose slots passed while no worker
// ran is caught up once, not once per missed slot.

describe('web data after a worker stopped', { timeout: 90_000 }, () => {
  let t: TestApp;
  let site: Site;
  let a: V1Tenant;
  let clock: ManualClock;

  beforeAll(async () => {
    site = await startSite({ articles: 3 });
    t = await webdataTestApp({ WEBDATA_FETCH_TIMEOUT_MS: '20000' });
    a = await seedV1Tenant(t.deps);
    clock = t.clock as ManualClock;
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  const ago = (ms: number) => new Date(clock.now().getTime() - ms);

  /** A batch as a worker that died mid-way leaves it: one item done, one in flight, one not started. */
  async function leftBehind(heartbeatAt: Date, resumes = 0) {
    const [b] = await t.deps.db.orm
      .insert(webdataBatches)
      .values({
        orgId: a.org.id,
        environment: 'production',
        type: 'extraction',
        status: 'processing',
        config: { mode: 'markdown' },
        totalUrls: 3,
        processedUrls: 1,
        successfulUrls: 1,
        heartbeatAt,
        resumes,
        createdAt: ago(3600_000),
      })
      .returning();
    await t.deps.db.orm.insert(webdataBatchItems).values(
      ['/articles/1', '/articles/2', '/about'].map((p, position) => ({
        batchId: b!.id,
        position,
        url: `${site.url}${p}`,
        status: (['completed', 'processing', 'pending'] as const)[position]!,
      })),
    );
    return b!.id;
  }

  /** A crawl of the test site as its row, in the state a test needs. */
  const crawlRow = async (
    state: Omit<typeof webdataCrawls.$inferInsert, 'orgId' | 'environment' | 'url' | 'options'>,
  ) => {
    const [c] = await t.deps.db.orm
      .insert(webdataCrawls)
      .values({
        orgId: a.org.id,
        environment: 'production',
        url: `${site.url}/`,
        options: { maxDepth: 2, maxPages: 10, formats: ['markdown'], respectRobotsTxt: true, stealth: false },
        ...state,
      })
      .returning();
    return c!;
  };
  const batch = async (id: string) => (await t.v1('GET', `/webdata/batch/${id}`, a.live)).json();
  const batchSettled = (id: string) => settled(t, a.live, `/webdata/batch/${id}`);

  it('resumes a batch whose worker stopped, and leaves a live one alone', async () => {
    const before = site.hits.get('/articles/1') ?? 0;
    const dead = await leftBehind(ago(STALE_MS + 1000));
    const live = await leftBehind(ago(10_000));
    const swept = await sweepInterrupted(t.deps);
    expect(swept.resumed).toEqual([dead]);
    expect(swept.resumed).not.toContain(live);
    const b = await batchSettled(dead);
    expect(b, JSON.stringify(b.items)).toMatchObject({
      status: 'completed',
      processedUrls: 3,
      successfulUrls: 3,
      failedUrls: 0,
    });
    expect(b.items.map((i: { status: string }) => i.status)).toEqual(['completed', 'completed', 'completed']);
    // The item finished before the stop is not fetched again.
    expect(site.hits.get('/articles/1') ?? 0).toBe(before);
    expect((await batch(live)).status).toBe('processing');
    // A second sweeper finds nothing: the batch was taken once.
    expect((await sweepInterrupted(t.deps)).resumed).toEqual([]);
    await t.deps.db.orm
      .update(webdataBatches)
      .set({ status: 'cancelled' })
      .where(eq(webdataBatches.id, live));
  });

  it('fails a batch that keeps stopping its worker, with counts that add up', async () => {
    const id = await leftBehind(ago(STALE_MS + 1000), MAX_RESUMES);
    const swept = await sweepInterrupted(t.deps);
    expect(swept.failedBatches).toEqual([id]);
    const b = await batch(id);
    expect(b).toMatchObject({ status: 'failed', processedUrls: 3, successfulUrls: 1, failedUrls: 2 });
    expect(b.items.slice(1).map((i: { error: string }) => i.error)).toEqual([BATCH_GAVE_UP, BATCH_GAVE_UP]);
  });

  it('a batch stopped by a shutdown is released and resumed by the next sweep at once', async () => {
    const id = await leftBehind(clock.now());
    await t.deps.db.orm.update(webdataBatches).set({ status: 'pending' }).where(eq(webdataBatches.id, id));
    await t.deps.db.orm
      .update(webdataBatchItems)
      .set({ status: 'pending' })
      .where(eq(webdataBatchItems.batchId, id));
    const stop = new AbortController();
    stop.abort();
    await runBatch(t.deps, id, stop.signal);
    expect((await batch(id)).status).toBe('processing');
    expect((await sweepInterrupted(t.deps)).resumed).toEqual([id]);
    expect((await batchSettled(id)).status).toBe('completed');
  });

  it('fails a crawl whose worker stopped, keeping its pages', async () => {
    const c = await crawlRow({
      status: 'processing',
      pagesCrawled: 1,
      pagesQueued: 4,
      heartbeatAt: ago(STALE_MS + 1000),
      createdAt: ago(3600_000),
    });
    await t.deps.db.orm.insert(webdataCrawlPages).values({
      crawlId: c.id,
      seq: 0,
      url: `${site.url}/`,
      depth: 0,
      statusCode: 200,
      title: 'Home',
      markdown: '# Home',
      createdAt: ago(3600_000),
    });
    expect((await sweepInterrupted(t.deps)).failedCrawls).toEqual([c.id]);
    const got = (await t.v1('GET', `/webdata/crawl/${c.id}`, a.live)).json();
    expect(got).toMatchObject({ status: 'failed', error: CRAWL_INTERRUPTED });
    const pages = (await t.v1('GET', `/webdata/crawl/${c.id}/pages`, a.live)).json();
    expect(pages.items.map((p: { title: string }) => p.title)).toEqual(['Home']);
  });

  it('a crawl stopped by a shutdown is not marked completed; the next sweep ends it with the reason', async () => {
    const c = await crawlRow({ status: 'pending', createdAt: clock.now() });
    const stop = new AbortController();
    stop.abort();
    await runCrawl(t.deps, c.id, stop.signal);
    expect((await t.v1('GET', `/webdata/crawl/${c.id}`, a.live)).json().status).toBe('processing');
    expect((await sweepInterrupted(t.deps)).failedCrawls).toEqual([c.id]);
    expect((await t.v1('GET', `/webdata/crawl/${c.id}`, a.live)).json()).toMatchObject({
      status: 'failed',
      error: CRAWL_INTERRUPTED,
    });
  });

  it('catches a schedule up once after days without a worker, not once per missed slot', async () => {
    const id = (
      await t.v1('POST', '/webdata/schedules', a.live, {
        name: 'Daily',
        url: `${site.url}/about`,
        type: 'extraction',
        frequency: 'daily',
      })
    ).json().id;
    await tickSchedules(t.deps);
    // Three days and a bit with no worker: three daily slots passed unrun.
    clock.advance(3 * 24 * 3600_000 + 5 * 3600_000);
    expect(await tickSchedules(t.deps)).toBe(1);
    expect(await tickSchedules(t.deps)).toBe(0);
    const runs = (await t.v1('GET', `/webdata/schedules/${id}/runs`, a.live)).json();
    expect(runs.items).toHaveLength(2);
    expect(runs.items[0].slot).toBe(slotOf('daily', clock.now()).toISOString());
    expect(runs.items.map((r: { status: string; error: string }) => r.error ?? r.status)).toEqual([
      'completed',
      'completed',
    ]);
  });
});
