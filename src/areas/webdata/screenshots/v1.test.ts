import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../../test/harness.ts';
import { seedV1Tenant } from '../../../../test/seed.ts';
import { expectV1Security, type V1Tenant } from '../../../../test/v1-security.ts';
import type { ManualClock } from '../../../core/clock.ts';

// The screenshot API without a worker: requests are validated, stored pending with the contract's defaults,
// listed with cursors, read and deleted within their tenant only. Rendering: test/e2e/browser/screenshots.test.ts.

describe('web data screenshots: API', () => {
  let t: TestApp;
  let a: V1Tenant;

  beforeAll(async () => {
    t = await testApp({ env: { V1_RATE_LIMIT_BURST: '1000000', V1_RATE_LIMIT_PER_SEC: '100000' } });
    a = await seedV1Tenant(t.deps);
  });
  afterAll(() => t.close());

  const create = (body: unknown, key = a.live) => t.v1('POST', '/webdata/screenshots', key, body);

  it('creates a pending screenshot with the defaults of the contract', async () => {
    const res = await create({ url: 'https://example.com/' });
    expect(res.statusCode).toBe(200);
    const { id, status } = res.json();
    expect(status).toBe('pending');
    const got = (await t.v1('GET', `/webdata/screenshots/${id}`, a.live)).json();
    expect(got).toMatchObject({
      id,
      url: 'https://example.com/',
      status: 'pending',
      format: 'png',
      fullPage: false,
      deviceType: 'desktop',
      imageUrl: null,
      imageSize: null,
      imageWidth: null,
      imageHeight: null,
      completedAt: null,
    });
    expect(typeof got.createdAt).toBe('string');
  });

  it('refuses bad input with a 400 envelope naming the field', async () => {
    const bad: [unknown, RegExp][] = [
      [{}, /url/],
      [{ url: 'ftp://example.com/' }, /url/],
      [{ url: 'not a url' }, /url/],
      [{ url: 'https://example.com', format: 'gif' }, /format/],
      [{ url: 'https://example.com', format: 'png', quality: 50 }, /quality/],
      [{ url: 'https://example.com', format: 'jpeg', quality: 101 }, /quality/],
      [{ url: 'https://example.com', deviceType: 'watch' }, /deviceType/],
      [{ url: 'https://example.com', viewportWidth: 10 }, /viewportWidth/],
      [{ url: 'https://example.com', viewportHeight: 100_000 }, /viewportHeight/],
      [{ url: 'https://example.com', waitForTimeout: -1 }, /waitForTimeout/],
      [{ url: 'https://example.com', waitForTimeout: 600_000 }, /waitForTimeout/],
      [{ url: 'https://example.com', format: 'pdf', selector: '#a' }, /selector/],
      [{ url: 'https://example.com', fullPage: true, selector: '#a' }, /selector/],
      [{ url: 'https://example.com', darkMode: 'yes' }, /darkMode/],
      [{ url: 'https://example.com', colour: 'red' }, /colour|unrecognized/i],
    ];
    for (const [body, field] of bad) {
      const res = await create(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
      expect(res.json().error.message).toMatch(field);
    }
    const notJson = await t.v1('POST', '/webdata/screenshots', a.live, '{"url":', {
      'content-type': 'application/json',
    });
    expect(notJson.statusCode).toBe(400);
  });

  it('lists newest first with cursors and filters, and refuses a forged cursor', async () => {
    const b = await seedV1Tenant(t.deps);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      (t.clock as ManualClock).advance(1000);
      ids.push((await create({ url: `https://example.com/${i}` }, b.live)).json().id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/webdata/screenshots?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = (await t.v1('GET', q, b.live)).json();
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((s: { id: string }) => s.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const byUrl = (await t.v1('GET', '/webdata/screenshots?url=https://example.com/3', b.live)).json();
    expect(byUrl.items.map((s: { id: string }) => s.id)).toEqual([ids[3]]);
    const byStatus = (await t.v1('GET', '/webdata/screenshots?status=completed', b.live)).json();
    expect(byStatus.items).toEqual([]);
    const forged = await t.v1('GET', '/webdata/screenshots?cursor=abc.def', b.live);
    expect(forged.statusCode).toBe(400);
    expect(forged.json().error.code).toBe('INVALID_CURSOR');
    // Another tenant's list does not show them, and its cursor is refused here.
    const other = (await t.v1('GET', '/webdata/screenshots', a.live)).json();
    expect(other.items.some((s: { id: string }) => ids.includes(s.id))).toBe(false);
  });

  it('deletes, and another organization or environment gets a 404', async () => {
    const { id } = (await create({ url: 'https://example.com/private' })).json();
    for (const [method, url] of [
      ['GET', `/webdata/screenshots/${id}`],
      ['DELETE', `/webdata/screenshots/${id}`],
    ] as const) {
      await expectV1Security(t, { method, url, owner: a, notFoundCode: 'SCREENSHOT_NOT_FOUND' });
    }
    await expectV1Security(t, {
      method: 'POST',
      url: '/webdata/screenshots',
      owner: a,
      body: { url: 'https://example.com' },
    });
    expect((await t.v1('GET', '/webdata/screenshots/not-a-uuid', a.live)).statusCode).toBe(404);
    const del = await t.v1('DELETE', `/webdata/screenshots/${id}`, a.live);
    expect(del.json()).toEqual({ success: true });
    expect((await t.v1('GET', `/webdata/screenshots/${id}`, a.live)).statusCode).toBe(404);
    expect((await t.v1('DELETE', `/webdata/screenshots/${id}`, a.live)).statusCode).toBe(404);
  });
});
