import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppReceiver } from '../../../test/app-webhooks.ts';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';
import type { ManualClock } from '../../core/clock.ts';
import { queueDueSyncs } from './sync-jobs.ts';
import { runSync } from './sync-run.ts';

// Syncs end to end against HubSpot's fake: 5,000 contacts copied into Pier, then 10 changed and 3 deleted
// at the provider; the next run reports exactly those, the app gets one Standard Webhook with the counts,
// and reading with modifiedAfter returns exactly the 10. A run stopped by a provider failure is resumed
// where it stopped. Bad input and other organizations' syncs and records.

let p: Providers & { close(): Promise<void> };
let t: TestApp;
let hooks: Awaited<ReturnType<typeof startAppReceiver>>;

const hsObj = (id: number, props: Record<string, string | null>) => {
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  return { id: String(id), properties: props, createdAt: at, updatedAt: at, archived: false };
};

beforeAll(async () => {
  [p, hooks] = await Promise.all([startProviders(), startAppReceiver()]);
  t = await integrationsApp(p, { queue: true });
  for (let i = 1; i <= 5000; i++)
    p.hubspot.store.contacts.push(
      hsObj(i, { firstname: `First${i}`, lastname: `Last${i}`, email: `c${i}@acme.test`, phone: null }),
    );
  for (let i = 1; i <= 300; i++) p.hubspot.store.companies.push(hsObj(i, { name: `Co ${i}`, domain: null }));
}, 60_000);
afterAll(async () => {
  await t?.close();
  await p?.close();
  await hooks?.close();
});

const clock = () => t.clock as ManualClock;

describe('syncs', () => {
  it('syncs 5,000 contacts, then reports exactly the 10 changed and 3 deleted, once, with modifiedAfter', async () => {
    const { api, tenant: tn } = await tenant(t);
    const conn = await connect(t, api, p.hubspot, 'hubspot');
    const set = await t.v1('PUT', '/integrations/webhook', tn.live, { url: hooks.url });
    const secret = set.json().secret as string;
    await hooks.deliver(t, tn.org.id, secret); // connection.created, sent before the webhook URL existed: none

    const created = await api.post('/integrations/syncs', { connectionId: conn, model: 'contacts' });
    expect(created.statusCode, created.body).toBe(201);
    const sync = created.json();
    expect(sync).toMatchObject({ model: 'contacts', frequencyMinutes: 60, paused: false, records: 0 });

    // The schedule queues it (due at once), and not twice while it waits.
    expect(await queueDueSyncs(t.deps)).toBeGreaterThanOrEqual(1);
    expect(await queueDueSyncs(t.deps)).toBe(0);

    const first = (await runSync(t.deps, sync.id))!;
    expect(first).toMatchObject({ status: 'succeeded', pages: 50, added: 5000, updated: 0, deleted: 0 });
    const firstEvents = await hooks.deliver(t, tn.org.id, secret);
    expect(firstEvents.map((e) => e.type)).toEqual(['sync.records_changed']);
    expect(firstEvents[0]!.data).toMatchObject({ syncId: sync.id, added: 5000, updated: 0, deleted: 0 });

    // At the provider: 10 contacts change, 3 are deleted.
    clock().advance(60_000);
    const changedAt = clock().now().toISOString();
    const changed = [7, 99, 100, 101, 1234, 2500, 3333, 4000, 4999, 5000].map(String);
    for (const c of p.hubspot.store.contacts.filter((x) => changed.includes(x.id))) {
      c.properties.lastname = `Renamed${c.id}`;
      c.updatedAt = new Date().toISOString();
    }
    const deleted = ['17', '42', '4321'];
    p.hubspot.store.contacts = p.hubspot.store.contacts.filter((x) => !deleted.includes(x.id));

    const second = (await runSync(t.deps, sync.id))!;
    expect(second).toMatchObject({ status: 'succeeded', added: 0, updated: 10, deleted: 3, resumed: false });
    const events = await hooks.deliver(t, tn.org.id, secret);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'sync.records_changed',
      data: {
        syncId: sync.id,
        runId: second.id,
        connectionId: conn,
        connectorSlug: 'hubspot',
        endUserId: 'user-1',
        model: 'contacts',
        added: 0,
        updated: 10,
        deleted: 3,
      },
    });

    // What changed since: exactly the 10 (deleted ones only when asked for).
    const since = await api.get('/integrations/records', {
      connectionId: conn,
      model: 'contacts',
      modifiedAfter: changedAt,
    });
    expect(since.statusCode, since.body).toBe(200);
    expect(
      since
        .json()
        .data.map((r: { id: string }) => r.id)
        .sort(),
    ).toEqual([...changed].sort());
    expect(since.json().data[0]).toMatchObject({
      lastAction: 'updated',
      deletedAt: null,
      record: { lastName: expect.stringMatching(/^Renamed/), rawData: expect.any(Object) },
    });
    const sinceWebhook = await api.get('/integrations/records', {
      connectionId: conn,
      model: 'contacts',
      modifiedAfter: events[0]!.data.modifiedAfter as string,
      includeDeleted: 'true',
    });
    const withDeletes = sinceWebhook.json().data as { id: string; lastAction: string }[];
    expect(withDeletes).toHaveLength(13);
    expect(
      withDeletes
        .filter((r) => r.lastAction === 'deleted')
        .map((r) => r.id)
        .sort(),
    ).toEqual([...deleted].sort());

    // Every record once across pages; 4,997 held now.
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await api.get('/integrations/records', {
        connectionId: conn,
        model: 'contacts',
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.statusCode, page.body).toBe(200);
      for (const r of page.json().data) seen.add(r.id);
      cursor = page.json().nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen.size).toBe(4997);
    const got = (await api.get(`/integrations/syncs/${sync.id}`)).json();
    expect(got).toMatchObject({ records: 4997, lastRun: { id: second.id, updated: 10, deleted: 3 } });

    // Nothing changed: a run that reports zeros and sends nothing.
    clock().advance(1000);
    const third = (await runSync(t.deps, sync.id))!;
    expect(third).toMatchObject({ status: 'succeeded', added: 0, updated: 0, deleted: 0 });
    expect(await hooks.deliver(t, tn.org.id, secret)).toEqual([]);
    const runs = (await api.get(`/integrations/syncs/${sync.id}/runs`)).json().data;
    expect(runs.map((r: { id: string }) => r.id)).toEqual([third.id, second.id, first.id]);

    // The dashboard's view: the sync with its connection and last run, and its runs; nothing for a stranger.
    const board = await t.call('listIntegrationSyncsForDashboard', { orgSlug: tn.org.slug }, tn.owner.token);
    expect(board.statusCode, board.body).toBe(200);
    expect(board.json().data).toEqual([
      expect.objectContaining({
        id: sync.id,
        connectorSlug: 'hubspot',
        records: 4997,
        lastRun: expect.objectContaining({ status: 'succeeded' }),
      }),
    ]);
    const boardRuns = await t.call(
      'listIntegrationSyncRunsForDashboard',
      { orgSlug: tn.org.slug, syncId: sync.id },
      tn.owner.token,
    );
    expect(boardRuns.json().data.map((r: { updated: number }) => r.updated)).toEqual([0, 10, 0]);
    const stranger = (await tenant(t)).tenant;
    const theirs = await t.call(
      'listIntegrationSyncRunsForDashboard',
      { orgSlug: stranger.org.slug, syncId: sync.id },
      stranger.owner.token,
    );
    expect(theirs.json().error.code).toBe('SYNC_NOT_FOUND');
    expect(
      (await t.call('listIntegrationSyncsForDashboard', { orgSlug: tn.org.slug }, stranger.owner.token))
        .statusCode,
    ).toBe(404);
  }, 120_000);

  it('resumes a run stopped by a provider failure where it stopped', async () => {
    const { api } = await tenant(t);
    const conn = await connect(t, api, p.hubspot, 'hubspot');
    const sync = (await api.post('/integrations/syncs', { connectionId: conn, model: 'companies' })).json();
    // The second page of companies meets a 429 asking for two minutes: the run ends there.
    const calls = p.hubspot.calls;
    const push = calls.push.bind(calls);
    let companyPages = 0;
    calls.push = (...items) => {
      for (const c of items)
        if (c.path === '/crm/v3/objects/companies' && ++companyPages === 2) p.hubspot.rateLimitNext(1, 120);
      return push(...items);
    };
    try {
      const failed = (await runSync(t.deps, sync.id))!;
      expect(failed).toMatchObject({
        status: 'failed',
        errorCode: 'PROVIDER_RATE_LIMITED',
        pages: 1,
        added: 100,
      });
      expect(failed.error).toContain('rate limiting');
      clock().advance(1000);
      const resumed = (await runSync(t.deps, sync.id))!;
      expect(resumed).toMatchObject({ status: 'succeeded', resumed: true, pages: 2, added: 200, deleted: 0 });
      expect(companyPages).toBe(4);
    } finally {
      calls.push = push;
    }
    const view = (await api.get(`/integrations/syncs/${sync.id}`)).json();
    expect(view.records).toBe(300);
    const runs = (await api.get(`/integrations/syncs/${sync.id}/runs`)).json().data;
    expect(runs.map((r: { status: string }) => r.status)).toEqual(['succeeded', 'failed']);
  }, 60_000);

  it("syncs a Drive's root files: a renamed file is updated, a removed one deleted", async () => {
    const { api } = await tenant(t);
    const conn = await connect(t, api, p.drive, 'google-drive');
    const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
    const file = (id: string, parents = ['root'], mimeType = 'text/plain') => ({
      id,
      name: `${id}.txt`,
      mimeType,
      parents,
      createdTime: at,
      modifiedTime: at,
      size: '10',
    });
    for (let i = 1; i <= 150; i++) p.drive.store.files.push(file(`d${i}`));
    // A folder and a file inside it are not root files.
    p.drive.store.files.push(
      file('folder1', ['root'], 'application/vnd.google-apps.folder'),
      file('deep', ['folder1']),
    );
    const sync = (await api.post('/integrations/syncs', { connectionId: conn, model: 'files' })).json();
    expect(sync.model).toBe('files');
    expect(await runSync(t.deps, sync.id)).toMatchObject({ status: 'succeeded', pages: 2, added: 150 });
    const renamed = p.drive.store.files.find((f) => f.id === 'd10')!;
    renamed.name = 'renamed.txt';
    renamed.modifiedTime = new Date().toISOString();
    p.drive.store.files = p.drive.store.files.filter((f) => f.id !== 'd20' && f.id !== 'd30');
    clock().advance(1000);
    const since = clock().now().toISOString();
    expect(await runSync(t.deps, sync.id)).toMatchObject({ added: 0, updated: 1, deleted: 2 });
    const changed = (
      await api.get('/integrations/records', { connectionId: conn, model: 'files', modifiedAfter: since })
    ).json().data;
    expect(changed).toEqual([
      expect.objectContaining({ id: 'd10', record: expect.objectContaining({ name: 'renamed.txt' }) }),
    ]);
    const hubspot = await connect(t, api, p.hubspot, 'hubspot');
    const refused = await api.post('/integrations/syncs', { connectionId: hubspot, model: 'files' });
    expect(refused.json().error.code).toBe('OPERATION_NOT_SUPPORTED');
  }, 60_000);

  it('refuses bad input, keeps other organizations out, and goes with its connection', async () => {
    const { api } = await tenant(t);
    const conn = await connect(t, api, p.hubspot, 'hubspot');
    const bad = async (body: unknown, code = 'VALIDATION_ERROR') => {
      const res = await api.post('/integrations/syncs', body);
      expect(res.statusCode, res.body).toBeLessThan(500);
      expect(res.json().error.code).toBe(code);
    };
    await bad({ connectionId: conn, model: 'tickets' });
    await bad({ connectionId: conn, model: 'contacts', frequencyMinutes: 1 });
    await bad({ model: 'contacts' });
    await bad({ connectionId: 'nope', model: 'contacts' }, 'CONNECTION_NOT_FOUND');
    const slack = await connect(t, api, p.slack, 'slack');
    await bad({ connectionId: slack, model: 'contacts' }, 'OPERATION_NOT_SUPPORTED');
    const sync = (await api.post('/integrations/syncs', { connectionId: conn, model: 'deals' })).json();
    const dup = await api.post('/integrations/syncs', { connectionId: conn, model: 'deals' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('SYNC_EXISTS');
    expect((await api.patch(`/integrations/syncs/${sync.id}`, {})).statusCode).toBe(400);
    const read = (q: Record<string, string>) =>
      api.get('/integrations/records', { connectionId: conn, model: 'deals', ...q });
    expect((await read({ modifiedAfter: 'yesterday' })).json().error.code).toBe('VALIDATION_ERROR');
    expect((await read({ cursor: 'abc.def' })).json().error.code).toBe('INVALID_CURSOR');
    expect((await read({ limit: '1001' })).statusCode).toBe(400);

    const paused = await api.patch(`/integrations/syncs/${sync.id}`, { paused: true, frequencyMinutes: 15 });
    expect(paused.json()).toMatchObject({ paused: true, frequencyMinutes: 15 });
    const run = await api.post(`/integrations/syncs/${sync.id}/run`, {});
    expect(run.statusCode, run.body).toBe(202);
    expect(run.json()).toEqual({ queued: true });

    // Another organization sees none of it.
    const other = (await tenant(t)).api;
    for (const res of [
      await other.get(`/integrations/syncs/${sync.id}`),
      await other.get(`/integrations/syncs/${sync.id}/runs`),
      await other.patch(`/integrations/syncs/${sync.id}`, { paused: false }),
      await other.post(`/integrations/syncs/${sync.id}/run`, {}),
      await other.del(`/integrations/syncs/${sync.id}`),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error.code).toBe('SYNC_NOT_FOUND');
    }
    for (const res of [
      await other.get('/integrations/records', { connectionId: conn, model: 'deals' }),
      await other.post('/integrations/syncs', { connectionId: conn, model: 'contacts' }),
      await other.get('/integrations/syncs', { connectionId: conn }),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error.code).toBe('CONNECTION_NOT_FOUND');
    }
    expect((await other.get('/integrations/syncs')).json().data).toEqual([]);

    // Deleting the connection deletes its syncs and records.
    expect((await api.del(`/integrations/connections/${conn}`)).statusCode).toBe(200);
    expect((await api.get(`/integrations/syncs/${sync.id}`)).statusCode).toBe(404);
  }, 60_000);
});
