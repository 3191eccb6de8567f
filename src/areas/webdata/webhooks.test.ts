import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { settled, webdataTestApp } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';
import { webdataCrawls } from './tables.ts';

// Per-crawl and per-batch webhooks, delivered by the platform's outbox to a real local receiver and
// verified with the `standardwebhooks` package: started, one page event per page (stored or failed),
// completed or failed, the caller's metadata echoed, only the events asked for, the secret never shown nor
// stored in plain text, and bad webhook bodies refused.

type Hook = { headers: Record<string, string>; body: string };
const SECRET = `whsec_${Buffer.from('a crawl webhook secret, 32 bytes').toString('base64')}`;

describe('web data webhooks', { timeout: 120_000 }, () => {
  let t: TestApp;
  let site: Site;
  let a: V1Tenant;
  let receiver: http.Server;
  let hookUrl: string;
  const hooks: Hook[] = [];

  beforeAll(async () => {
    site = await startSite({ articles: 3 });
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        hooks.push({
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    t = await webdataTestApp();
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
    receiver?.close();
  });

  type Event = { type: string; data: Record<string, unknown> & { id: string } };
  /** Waits for `count` deliveries about `id`, each verified with the standardwebhooks package. */
  const eventsOf = async (id: string, count: number): Promise<Event[]> => {
    const wh = new Webhook(SECRET);
    const mine = () =>
      hooks.map((h) => wh.verify(h.body, h.headers) as Event).filter((e) => e.data.id === id);
    const end = Date.now() + 60_000;
    while (mine().length < count && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    return mine();
  };
  const types = (events: Event[]) => events.map((e) => e.type);

  it('a crawl sends started, a page event per page, and completed, each verifiable', async () => {
    const res = await t.v1('POST', '/webdata/crawl', a.live, {
      url: `${site.url}/`,
      maxDepth: 1,
      webhook: { url: hookUrl, secret: SECRET, metadata: { project: 'garden' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().id;
    const c = await settled(t, a.live, `/webdata/crawl/${id}`);
    expect(c.status).toBe('completed');
    // The secret is not shown, and not at rest in plain text.
    expect(c.webhook).toEqual({ url: hookUrl, events: ['started', 'page', 'completed', 'failed'] });
    const [row] = await t.deps.db.orm.select().from(webdataCrawls).where(eq(webdataCrawls.id, id));
    expect(JSON.stringify(row)).not.toContain(SECRET.slice(6));

    // 5 stored pages and /missing (failed), then the end.
    const events = await eventsOf(id, 8);
    expect(events).toHaveLength(8);
    expect(types(events).sort()).toEqual([
      'webdata.crawl.completed',
      ...Array(6).fill('webdata.crawl.page'),
      'webdata.crawl.started',
    ]);
    for (const e of events) expect(e.data.metadata).toEqual({ project: 'garden' });
    const pages = events.filter((e) => e.type === 'webdata.crawl.page').map((e) => e.data.page);
    expect(pages).toContainEqual(
      expect.objectContaining({ url: `${site.url}/docs`, title: 'Docs', statusCode: 200, error: null }),
    );
    expect(pages).toContainEqual(
      expect.objectContaining({
        url: `${site.url}/missing`,
        statusCode: 404,
        error: 'HTTP status: the page answered 404.',
      }),
    );
    const docs = pages.find((p) => (p as { title: string }).title === 'Docs') as { markdown: string };
    expect(docs.markdown).toContain('| Name | Type | Default |');
    const done = events.find((e) => e.type === 'webdata.crawl.completed')!;
    expect(done.data).toMatchObject({ status: 'completed', pagesCrawled: 5, pagesFailed: 1, error: null });
    // Signed with another secret, it does not verify.
    const other = new Webhook(`whsec_${Buffer.from('another secret of 32 bytes ......').toString('base64')}`);
    const some = hooks.find((h) => h.body.includes(id))!;
    expect(() => other.verify(some.body, some.headers)).toThrow();
  });

  it('sends only the events asked for: a crawl whose start page fails sends failed', async () => {
    const res = await t.v1('POST', '/webdata/crawl', a.live, {
      url: `${site.url}/missing`,
      webhook: { url: hookUrl, secret: SECRET, events: ['failed'] },
    });
    const id = res.json().id;
    const c = await settled(t, a.live, `/webdata/crawl/${id}`);
    expect(c.status).toBe('failed');
    const events = await eventsOf(id, 1);
    expect(types(events)).toEqual(['webdata.crawl.failed']);
    expect(events[0]!.data).toMatchObject({
      status: 'failed',
      error: 'HTTP status: the page answered 404.',
      metadata: {},
    });
    // Nothing else arrives for it once every delivery of the outbox is done.
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventsOf(id, 1)).toHaveLength(1);
  });

  it('a batch sends started, a page event per URL, and completed with its counts', async () => {
    const res = await t.v1('POST', '/webdata/batch/extractions', a.live, {
      urls: [`${site.url}/about`, `${site.url}/missing`],
      config: { mode: 'markdown' },
      webhook: { url: hookUrl, secret: SECRET, metadata: { run: 7 } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().id;
    const b = await settled(t, a.live, `/webdata/batch/${id}`);
    expect(b.webhook).toEqual({ url: hookUrl, events: ['started', 'page', 'completed', 'failed'] });
    const events = await eventsOf(id, 4);
    expect(types(events).sort()).toEqual([
      'webdata.batch.completed',
      'webdata.batch.page',
      'webdata.batch.page',
      'webdata.batch.started',
    ]);
    const items = events.filter((e) => e.type === 'webdata.batch.page').map((e) => e.data.item);
    expect(items).toContainEqual(
      expect.objectContaining({ url: `${site.url}/about`, status: 'completed', error: null }),
    );
    expect(items).toContainEqual(
      expect.objectContaining({
        url: `${site.url}/missing`,
        status: 'failed',
        error: 'HTTP status: the page answered 404.',
        errorCode: 'REMOTE_HTTP_ERROR',
      }),
    );
    const done = events.find((e) => e.type === 'webdata.batch.completed')!;
    expect(done.data).toMatchObject({
      type: 'extraction',
      status: 'completed',
      totalUrls: 2,
      successfulUrls: 1,
      failedUrls: 1,
      metadata: { run: 7 },
    });
  });

  it('refuses bad webhooks on crawls and batches', async () => {
    const ok = { url: hookUrl, secret: SECRET };
    for (const webhook of [
      { ...ok, url: 'ftp://127.0.0.1/x' },
      { ...ok, url: 'not a url' },
      { ...ok, secret: 'short' },
      { url: hookUrl },
      { ...ok, events: [] },
      { ...ok, events: ['finished'] },
      { ...ok, headers: { x: 'y' } },
      { ...ok, metadata: { big: 'x'.repeat(5000) } },
      'http://127.0.0.1/hooks',
    ]) {
      const crawl = await t.v1('POST', '/webdata/crawl', a.live, { url: site.url, webhook });
      expect(crawl.statusCode, JSON.stringify(webhook)).toBe(400);
      expect(crawl.json().error.code).toBe('VALIDATION_ERROR');
      const batch = await t.v1('POST', '/webdata/batch/extractions', a.live, { urls: [site.url], webhook });
      expect(batch.statusCode, JSON.stringify(webhook)).toBe(400);
    }
  });
});
