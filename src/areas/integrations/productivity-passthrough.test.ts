import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { v1Client } from '../../../test/v1-client.ts';
import { checkPath } from './passthrough.ts';

// Productivity through Notion's fake (POST /search and database queries paged by start_cursor/has_more,
// JSON token endpoint with Basic client auth, Notion-Version header) and passthrough to each provider.

let p: Providers & { close(): Promise<void> };
let t: TestApp;

beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p);
  const now = new Date().toISOString();
  p.notion.store.databases.push({
    object: 'database',
    id: 'db-1',
    created_time: now,
    title: [{ type: 'text', plain_text: 'Tasks', text: { content: 'Tasks' } }],
    properties: {
      Name: { id: 'title', type: 'title' },
      Done: { id: 'd', type: 'checkbox' },
      Points: { id: 'p', type: 'number' },
    },
  });
  p.notion.store.rows.set('db-1', []);
});
afterAll(async () => {
  await t?.close();
  await p?.close();
});

describe('productivity (notion)', () => {
  it('creates and pages documents; lists tables; adds and lists rows with typed fields', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.notion, 'notion');
    expect((await api.get(`/integrations/connections/${id}`)).json()).toMatchObject({
      externalAccountId: 'ws-1',
      externalAccountName: 'Acme Notes',
    });
    for (let i = 1; i <= 3; i++) {
      const doc = await api.post('/integrations/productivity/documents', {
        connectionId: id,
        title: `Doc ${i}`,
        content: 'First para.\n\nSecond para.',
      });
      expect(doc.statusCode, doc.body).toBe(201);
      expect(doc.json()).toMatchObject({ title: `Doc ${i}`, url: expect.stringContaining('notion.so') });
    }
    const d1 = (await api.get('/integrations/productivity/documents', { connectionId: id, limit: 2 })).json();
    expect(d1.data.map((d: { title: string }) => d.title)).toEqual(['Doc 1', 'Doc 2']);
    const d2 = (
      await api.get('/integrations/productivity/documents', {
        connectionId: id,
        limit: 2,
        cursor: d1.nextCursor,
      })
    ).json();
    expect(d2.data.map((d: { title: string }) => d.title)).toEqual(['Doc 3']);
    expect(d2.nextCursor).toBeNull();
    expect((await api.post('/integrations/productivity/documents', { connectionId: id })).statusCode).toBe(
      400,
    );

    const tables = (await api.get('/integrations/productivity/tables', { connectionId: id })).json();
    expect(tables.data).toEqual([expect.objectContaining({ id: 'db-1', name: 'Tasks' })]);
    const row = await api.post('/integrations/productivity/tables/db-1/rows', {
      connectionId: id,
      fields: { Name: 'Write tests', Done: true, Points: 3 },
    });
    expect(row.statusCode, row.body).toBe(201);
    expect(row.json()).toMatchObject({
      tableId: 'db-1',
      fields: { Name: 'Write tests', Done: true, Points: 3 },
    });
    const sent = p.notion.store.rows.get('db-1')![0]!.properties as Record<string, Record<string, unknown>>;
    expect(sent.Done).toMatchObject({ type: 'checkbox', checkbox: true });
    const rows = (await api.get('/integrations/productivity/tables/db-1/rows', { connectionId: id })).json();
    expect(rows.data).toHaveLength(1);
    expect(rows.data[0].fields).toEqual({ Name: 'Write tests', Done: true, Points: 3 });
    const unknownCol = await api.post('/integrations/productivity/tables/db-1/rows', {
      connectionId: id,
      fields: { Nope: 1 },
    });
    expect(unknownCol.statusCode).toBe(400);
    const noTable = await api.get('/integrations/productivity/tables/db-x/rows', { connectionId: id });
    expect(noTable.statusCode).toBe(404);
    expect(noTable.json().error.message).toContain('Could not find database');
    expect(
      (await api.post('/integrations/productivity/tables/db-1/rows', { connectionId: id })).statusCode,
    ).toBe(400);
  });
});

describe('passthrough', () => {
  it('sends the call to the API base with the connection token and answers the provider as is', async () => {
    const { api, tenant: owner } = await tenant(t);
    const slack = await connect(t, api, p.slack, 'slack');
    const res = await api.post('/integrations/passthrough', {
      connectionId: slack,
      method: 'GET',
      path: '/auth.test',
      headers: { Authorization: 'Bearer stolen', 'x-custom': 'yes', Connection: 'close' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-pier-passthrough']).toBe('1');
    expect(res.json()).toMatchObject({ ok: true, team_id: 'T0001' });
    const last = p.slack.calls.at(-1)!;
    expect(last.path).toBe('/api/auth.test');
    expect(last.token).toMatch(/^at_/);

    const hs = await connect(t, api, p.hubspot, 'hubspot');
    const created = await api.post('/integrations/passthrough', {
      connectionId: hs,
      method: 'POST',
      path: 'crm/v3/objects/companies',
      body: { properties: { name: 'Raw Co' } },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().properties.name).toBe('Raw Co');
    const missing = await api.post('/integrations/passthrough', {
      connectionId: hs,
      method: 'GET',
      path: '/crm/v3/objects/deals/999',
      query: { archived: false },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ status: 'error', category: 'OBJECT_NOT_FOUND' });

    for (const path of [
      'http://evil.test/x',
      '//evil.test/x',
      '/../admin',
      '/a/%2e%2e/b',
      '/a\\b',
      '/x?y=1',
    ]) {
      const bad = await api.post('/integrations/passthrough', { connectionId: hs, method: 'GET', path });
      expect(bad.statusCode, path).toBe(400);
      expect(bad.json().error.code).toBe('PASSTHROUGH_PATH_INVALID');
    }
    expect(
      (await api.post('/integrations/passthrough', { connectionId: hs, method: 'TRACE', path: '/x' }))
        .statusCode,
    ).toBe(400);
    const other = await seedV1Tenant(t.deps);
    const foreign = await v1Client(t, other.live).post('/integrations/passthrough', {
      connectionId: hs,
      method: 'GET',
      path: '/crm/v3/objects/deals',
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('CONNECTION_NOT_FOUND');
    const sandbox = await v1Client(t, owner.test).post('/integrations/passthrough', {
      connectionId: hs,
      method: 'GET',
      path: '/crm/v3/objects/deals',
    });
    expect(sandbox.statusCode).toBe(404);
  });

  it('keeps paths inside the base', () => {
    expect(checkPath('crm/v3/objects')).toBe('/crm/v3/objects');
    expect(checkPath('/files/a%20b')).toBe('/files/a%20b');
    expect(() => checkPath('javascript:alert(1)')).toThrow();
    expect(() => checkPath('/a/%2E%2E')).toThrow();
  });
});
