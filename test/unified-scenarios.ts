import { expect } from 'vitest';
import { storeTokens } from '../src/areas/integrations/connection-tokens.ts';
import { connectorBySlug } from '../src/areas/integrations/connectors/index.ts';
import { integrationConnections as conns } from '../src/areas/integrations/tables.ts';
import type { KitFake } from './fakes/unified/kit.ts';
import { SECRET } from './fakes/unified/kit.ts';
import type { TestApp } from './harness.ts';
import { seedV1Tenant } from './seed.ts';
import { type V1Client, v1Client } from './v1-client.ts';

// The unified scenarios every kit fake goes through (unified-providers.test.ts): one per category, the same
// assertions for every provider, through Pier's public unified API. A provider's case says how to start its
// fake, the env that points Pier at it, and what it does not offer.

export type UnifiedCase = {
  slug: string;
  category: 'crm' | 'storage' | 'communication' | 'productivity';
  start(): Promise<KitFake<unknown>>;
  /** INTEGRATIONS_<SLUG>_API_URL (and _CONTENT_URL) for the fake's URL. */
  env(url: string): Record<string, string>;
  /** Facts a real token answer would have left on the connection (Discord's guild). */
  meta?: Record<string, unknown>;
  /** Operations the provider has no equivalent for (answered 400 OPERATION_NOT_SUPPORTED or 4xx). */
  without?: ('documents' | 'createDeal' | 'createDocument')[];
  /** Seeds what the API cannot create (channels, users, tables and their rows). */
  seed?(store: unknown): void;
};

/** A connected connection with the kit's secret as its token or key (the flows are catalogue.test.ts's). */
export async function seedConnection(t: TestApp, orgId: string, c: UnifiedCase): Promise<string> {
  const now = t.deps.clock.now();
  const [row] = await t.deps.db.orm
    .insert(conns)
    .values({
      orgId,
      environment: 'production',
      connectorSlug: c.slug,
      endUserId: 'user-1',
      status: 'connected',
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: conns.id });
  // HTTP Basic providers carry `key:password` base64-encoded, as connection-credentials.ts stores it.
  const auth = connectorBySlug(c.slug)!.entry.auth;
  const secret =
    auth.kind === 'basic' ? Buffer.from(`${SECRET}:${auth.fixedPassword ?? ''}`).toString('base64') : SECRET;
  await storeTokens(t.deps, row!.id, { accessToken: secret, extra: c.meta });
  return row!.id;
}

export async function runCase(t: TestApp, c: UnifiedCase, fake: KitFake<unknown>): Promise<void> {
  const tn = await seedV1Tenant(t.deps);
  const api = v1Client(t, tn.live);
  const id = await seedConnection(t, tn.org.id, c);
  c.seed?.(fake.store);
  await scenarios[c.category](t, api, id, c);
  // Tenancy: another organization's key sees no such connection.
  const other = v1Client(t, (await seedV1Tenant(t.deps)).live);
  const path = {
    crm: 'crm/contacts',
    storage: 'storage/files',
    communication: 'communication/channels',
    productivity: 'productivity/tables',
  }[c.category];
  const foreign = await other.get(`/integrations/${path}`, { connectionId: id });
  expect(foreign.statusCode).toBe(404);
}

type Item = Record<string, unknown> & { id: string };
const ok = (r: { statusCode: number; body: string }, status = 200) => {
  expect(r.statusCode, r.body).toBe(status);
  return JSON.parse(r.body);
};

/** Every item of a list, two at a time: no duplicates, and the cursor ends. */
async function listAll(api: V1Client, path: string, q: Record<string, string>): Promise<Item[]> {
  const out: Item[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 20; i++) {
    const page = ok(await api.get(path, { ...q, limit: 2, ...(cursor ? { cursor } : {}) }));
    expect(page.data.length).toBeLessThanOrEqual(2);
    out.push(...page.data);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  expect(cursor).toBeNull();
  expect(new Set(out.map((x) => x.id)).size).toBe(out.length);
  for (const x of out) expect(x.rawData).toBeTypeOf('object');
  return out;
}

const scenarios: Record<
  UnifiedCase['category'],
  (t: TestApp, api: V1Client, id: string, c: UnifiedCase) => Promise<void>
> = {
  async crm(_t, api, connectionId, c) {
    const made: Item[] = [];
    for (const n of [1, 2, 3])
      made.push(
        ok(
          await api.post('/integrations/crm/contacts', {
            connectionId,
            firstName: `Ada${n}`,
            lastName: `Lovelace${n}`,
            email: `ada${n}@acme.test`,
            phone: `+4420000000${n}`,
            title: 'Engineer',
          }),
          201,
        ),
      );
    expect(made[0]).toMatchObject({ firstName: 'Ada1', lastName: 'Lovelace1', email: 'ada1@acme.test' });
    const all = await listAll(api, '/integrations/crm/contacts', { connectionId });
    expect(all.map((x) => x.email).sort()).toEqual(['ada1@acme.test', 'ada2@acme.test', 'ada3@acme.test']);
    const got = ok(await api.get(`/integrations/crm/contacts/${made[0]!.id}`, { connectionId }));
    expect(got).toMatchObject({
      id: made[0]!.id,
      firstName: 'Ada1',
      phone: '+44200000001',
      title: 'Engineer',
    });
    const upd = ok(
      await api.patch(`/integrations/crm/contacts/${made[0]!.id}`, {
        connectionId,
        title: 'CTO',
        lastName: 'King',
      }),
    );
    expect(upd).toMatchObject({ title: 'CTO', lastName: 'King', firstName: 'Ada1' });
    ok(await api.del(`/integrations/crm/contacts/${made[2]!.id}?connectionId=${connectionId}`));
    const gone = await api.get(`/integrations/crm/contacts/${made[2]!.id}`, { connectionId });
    expect(gone.statusCode, gone.body).toBe(404);
    expect(gone.json().error.code).toBe('PROVIDER_RESOURCE_NOT_FOUND');

    const co = ok(
      await api.post('/integrations/crm/companies', { connectionId, name: 'Acme', domain: 'acme.test' }),
      201,
    );
    expect(co).toMatchObject({ name: 'Acme' });
    const companies = await listAll(api, '/integrations/crm/companies', { connectionId });
    expect(companies.map((x) => x.name)).toContain('Acme');
    if (!c.without?.includes('createDeal')) {
      const deal = ok(
        await api.post('/integrations/crm/deals', { connectionId, name: 'Big deal', amount: 1200 }),
        201,
      );
      expect(deal).toMatchObject({ name: 'Big deal', amount: 1200 });
    }
    const deals = await listAll(api, '/integrations/crm/deals', { connectionId });
    expect(deals.find((x) => x.name === 'Big deal')).toMatchObject({ amount: 1200 });
  },

  async storage(t, api, connectionId) {
    const folder = ok(
      await api.post('/integrations/storage/folders', { connectionId, name: 'Reports' }),
      201,
    );
    expect(folder.name).toBe('Reports');
    const roots = await listAll(api, '/integrations/storage/folders', { connectionId });
    expect(roots.map((x) => x.name)).toContain('Reports');
    const content = Buffer.from('id,total\n1,42\n');
    const files: Item[] = [];
    for (const n of [1, 2, 3])
      files.push(
        ok(
          await api.post('/integrations/storage/files', {
            connectionId,
            name: `r${n}.csv`,
            mimeType: 'text/csv',
            data: content.toString('base64'),
            folderId: folder.id,
          }),
          201,
        ),
      );
    expect(files[0]).toMatchObject({ name: 'r1.csv', size: content.length, folderId: folder.id });
    const inFolder = await listAll(api, '/integrations/storage/files', { connectionId, folderId: folder.id });
    expect(inFolder.map((x) => x.name).sort()).toEqual(['r1.csv', 'r2.csv', 'r3.csv']);
    const dl = ok(await api.get(`/integrations/storage/files/${files[0]!.id}/download`, { connectionId }));
    expect(dl).toMatchObject({ data: content.toString('base64'), filename: 'r1.csv' });
    const link = ok(
      await api.get(`/integrations/storage/files/${files[0]!.id}/download-url`, { connectionId }),
    );
    const streamed = await t.app.inject({ method: 'GET', url: new URL(link.url).pathname });
    expect(streamed.statusCode, streamed.body).toBe(200);
    expect(streamed.body).toBe(content.toString());
    ok(await api.del(`/integrations/storage/files/${files[1]!.id}?connectionId=${connectionId}`));
    const gone = await api.get(`/integrations/storage/files/${files[1]!.id}/download`, { connectionId });
    expect(gone.statusCode, gone.body).toBe(404);
  },

  async communication(_t, api, connectionId) {
    const channels = await listAll(api, '/integrations/communication/channels', { connectionId });
    expect(channels.length).toBeGreaterThanOrEqual(3);
    expect(channels[0]).toMatchObject({ name: expect.any(String), isPrivate: expect.any(Boolean) });
    const channelId = channels[0]!.id;
    const posted = ok(
      await api.post('/integrations/communication/messages', {
        connectionId,
        channelId,
        content: 'Hello from Pier',
      }),
      201,
    );
    expect(posted).toMatchObject({ channelId, content: 'Hello from Pier' });
    const msgs = await listAll(api, '/integrations/communication/messages', { connectionId, channelId });
    expect(msgs.map((m) => m.content)).toContain('Hello from Pier');
    const users = await listAll(api, '/integrations/communication/users', { connectionId });
    expect(users.length).toBeGreaterThanOrEqual(3);
    expect(users.some((u) => typeof u.email === 'string' && u.email.includes('@'))).toBe(true);
  },

  async productivity(_t, api, connectionId, c) {
    if (c.without?.includes('documents')) {
      const r = await api.get('/integrations/productivity/documents', { connectionId });
      expect(r.statusCode).toBe(400);
    } else {
      const doc = ok(
        await api.post('/integrations/productivity/documents', { connectionId, title: 'Plan' }),
        201,
      );
      expect(doc.title).toBe('Plan');
      const docs = await listAll(api, '/integrations/productivity/documents', { connectionId });
      expect(docs.map((d) => d.title)).toContain('Plan');
    }
    const tables = await listAll(api, '/integrations/productivity/tables', { connectionId });
    expect(tables.length).toBeGreaterThanOrEqual(1);
    const tableId = tables[0]!.id;
    const rows = await listAll(api, `/integrations/productivity/tables/${encodeURIComponent(tableId)}/rows`, {
      connectionId,
    });
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows[0]!.fields).toMatchObject({ Name: expect.any(String) });
    const row = ok(
      await api.post(`/integrations/productivity/tables/${encodeURIComponent(tableId)}/rows`, {
        connectionId,
        fields: { Name: 'New row', Status: 'Open' },
      }),
      201,
    );
    expect(row).toMatchObject({ tableId, fields: { Name: 'New row', Status: 'Open' } });
  },
};
