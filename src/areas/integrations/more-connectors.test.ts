import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startAirtable,
  startDropbox,
  startPipedrive,
  startSalesforce,
} from '../../../test/fakes/integration-providers-more.ts';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';

// The second connector of each category (Salesforce, Pipedrive, Dropbox, Airtable) through the same unified
// routes, against fakes of their own wire formats.

let p: Providers & { close(): Promise<void> };
let sf: Awaited<ReturnType<typeof startSalesforce>>;
let pd: Awaited<ReturnType<typeof startPipedrive>>;
let dbx: Awaited<ReturnType<typeof startDropbox>>;
let at: Awaited<ReturnType<typeof startAirtable>>;
let t: TestApp;

beforeAll(async () => {
  p = await startProviders();
  [sf, pd, dbx, at] = await Promise.all([
    startSalesforce(),
    startPipedrive(),
    startDropbox(),
    startAirtable(),
  ]);
  const env = (
    slug: string,
    f: { url: string },
    id: string,
    secret: string,
    auth: string,
    token: string,
    api: string,
  ) => ({
    [`INTEGRATIONS_${slug}_CLIENT_ID`]: id,
    [`INTEGRATIONS_${slug}_CLIENT_SECRET`]: secret,
    [`INTEGRATIONS_${slug}_AUTH_URL`]: `${f.url}${auth}`,
    [`INTEGRATIONS_${slug}_TOKEN_URL`]: `${f.url}${token}`,
    [`INTEGRATIONS_${slug}_API_URL`]: `${f.url}${api}`,
  });
  t = await integrationsApp(p, {
    env: {
      ...env(
        'SALESFORCE',
        sf,
        'sf-client',
        'sf-secret',
        '/services/oauth2/authorize',
        '/services/oauth2/token',
        '',
      ),
      ...env('PIPEDRIVE', pd, 'pd-client', 'pd-secret', '/oauth/authorize', '/oauth/token', '/api/v1'),
      ...env('DROPBOX', dbx, 'dbx-client', 'dbx-secret', '/oauth2/authorize', '/oauth2/token', '/api/2'),
      INTEGRATIONS_DROPBOX_CONTENT_URL: `${dbx.url}/content/2`,
      ...env('AIRTABLE', at, 'at-client', 'at-secret', '/oauth2/v1/authorize', '/oauth2/v1/token', '/v0'),
    },
  });
});
afterAll(async () => {
  await t?.close();
  await p?.close();
  await Promise.all([sf?.close(), pd?.close(), dbx?.close(), at?.close()]);
});

async function pageAll(
  api: Awaited<ReturnType<typeof tenant>>['api'],
  path: string,
  q: Record<string, string | number>,
) {
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await api.get(path, { ...q, ...(cursor ? { cursor } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    out.push(...res.json().data);
    cursor = res.json().nextCursor ?? undefined;
    pages++;
  } while (cursor);
  return { items: out, pages };
}

describe('salesforce', () => {
  it('connects with PKCE, pages contacts by keyset, creates, updates and deletes', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, sf, 'salesforce');
    expect((await api.get(`/integrations/connections/${id}`)).json()).toMatchObject({
      externalAccountId: '00DACME',
      externalAccountName: 'admin@acme.test',
    });
    expect(sf.tokenGrants.at(-1)!.body.code_verifier).toBeTruthy();
    for (let i = 0; i < 5; i++) {
      const c = await api.post('/integrations/crm/contacts', {
        connectionId: id,
        firstName: `F${i}`,
        lastName: `L${i}`,
        email: `f${i}@acme.test`,
      });
      expect(c.statusCode, c.body).toBe(201);
    }
    const all = await pageAll(api, '/integrations/crm/contacts', { connectionId: id, limit: 2 });
    expect(all.pages).toBe(3);
    expect(all.items.map((c) => c.lastName)).toEqual(['L0', 'L1', 'L2', 'L3', 'L4']);
    const first = all.items[0] as { id: string };
    const upd = await api.patch(`/integrations/crm/contacts/${first.id}?connectionId=${id}`, { title: 'VP' });
    expect(upd.json()).toMatchObject({ title: 'VP', lastName: 'L0' });
    expect((await api.del(`/integrations/crm/contacts/${first.id}?connectionId=${id}`)).json()).toEqual({
      success: true,
    });
    const gone = await api.get(`/integrations/crm/contacts/${first.id}`, { connectionId: id });
    expect(gone.json().error).toMatchObject({
      code: 'PROVIDER_RESOURCE_NOT_FOUND',
      message: expect.stringContaining('NOT_FOUND'),
    });
    expect(
      (await api.post('/integrations/crm/contacts', { connectionId: id, firstName: 'x' })).json().error.code,
    ).toBe('VALIDATION_ERROR');
    const deal = await api.post('/integrations/crm/deals', {
      connectionId: id,
      name: 'Renewal',
      amount: 5000,
    });
    expect(deal.json()).toMatchObject({ name: 'Renewal', amount: 5000, stage: 'Prospecting' });
    const co = await api.post('/integrations/crm/companies', {
      connectionId: id,
      name: 'Acme',
      domain: 'acme.test',
    });
    expect(co.json()).toMatchObject({ name: 'Acme', domain: 'acme.test' });
    // Salesforce tokens carry no expiry: a 401 refreshes.
    sf.expireAccessTokens();
    expect((await api.get('/integrations/crm/companies', { connectionId: id })).statusCode).toBe(200);
  });
});

describe('pipedrive', () => {
  it('connects with Basic client auth and pages persons by offset', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, pd, 'pipedrive');
    expect((await api.get(`/integrations/connections/${id}`)).json()).toMatchObject({
      externalAccountId: '99',
      externalAccountName: 'Acme Ltd',
    });
    for (let i = 0; i < 3; i++)
      await api.post('/integrations/crm/contacts', {
        connectionId: id,
        firstName: `P${i}`,
        lastName: 'Doe',
        email: `p${i}@acme.test`,
        phone: '123',
      });
    const all = await pageAll(api, '/integrations/crm/contacts', { connectionId: id, limit: 2 });
    expect(all.pages).toBe(2);
    expect(all.items[0]).toMatchObject({
      firstName: 'P0',
      lastName: 'Doe',
      email: 'p0@acme.test',
      phone: '123',
    });
    const pid = (all.items[0] as { id: string }).id;
    expect(
      (await api.patch(`/integrations/crm/contacts/${pid}`, { connectionId: id, lastName: 'Roe' })).json()
        .lastName,
    ).toBe('Roe');
    expect((await api.del(`/integrations/crm/contacts/${pid}?connectionId=${id}`)).json()).toEqual({
      success: true,
    });
    expect((await api.get(`/integrations/crm/contacts/${pid}`, { connectionId: id })).statusCode).toBe(404);
    expect(
      (
        await api.post('/integrations/crm/deals', { connectionId: id, name: 'D', amount: 10, stage: '3' })
      ).json(),
    ).toMatchObject({ name: 'D', amount: 10, stage: '3' });
    expect((await api.get('/integrations/crm/deals', { connectionId: id })).json().data).toHaveLength(1);
    // Revocation sends the refresh token with Basic client auth.
    expect((await api.del(`/integrations/connections/${id}`)).json()).toEqual({ success: true });
  });
});

describe('dropbox', () => {
  it('uploads to the content host, lists with list_folder/continue, downloads and deletes', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, dbx, 'dropbox');
    const folder = (
      await api.post('/integrations/storage/folders', { connectionId: id, name: 'Docs' })
    ).json();
    expect(folder).toMatchObject({ name: 'Docs', id: expect.stringMatching(/^id:/) });
    const ids: string[] = [];
    for (const name of ['a.txt', 'b.csv', 'ç.txt']) {
      const up = await api.post('/integrations/storage/files', {
        connectionId: id,
        name,
        mimeType: 'text/plain',
        data: Buffer.from(`hi ${name}`).toString('base64'),
        folderId: folder.id,
      });
      expect(up.statusCode, up.body).toBe(201);
      ids.push(up.json().id);
    }
    const all = await pageAll(api, '/integrations/storage/files', {
      connectionId: id,
      folderId: folder.id,
      limit: 2,
    });
    expect(all.items.map((f) => f.name)).toEqual(['a.txt', 'b.csv', 'ç.txt']);
    expect(all.pages).toBe(2);
    const dl = (await api.get(`/integrations/storage/files/${ids[1]}/download`, { connectionId: id })).json();
    expect(dl).toEqual({
      data: Buffer.from('hi b.csv').toString('base64'),
      mimeType: 'text/csv',
      filename: 'b.csv',
    });
    expect(
      (await api.del(`/integrations/storage/files/${encodeURIComponent(ids[0]!)}?connectionId=${id}`)).json(),
    ).toEqual({ success: true });
    const missing = await api.get(`/integrations/storage/files/${encodeURIComponent(ids[0]!)}/download`, {
      connectionId: id,
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.message).toContain('path/not_found');
    expect(
      (await api.get('/integrations/storage/folders', { connectionId: id }))
        .json()
        .data.map((f: { name: string }) => f.name),
    ).toEqual(['Docs']);
  });
});

describe('airtable', () => {
  it('lists tables across bases, adds and pages rows; has no documents', async () => {
    at.store.bases.push({
      id: 'appA',
      name: 'CRM',
      tables: [{ id: 'tblLeads', name: 'Leads', records: [] }],
    });
    const { api } = await tenant(t);
    const id = await connect(t, api, at, 'airtable');
    expect(at.tokenGrants.at(-1)!.body.code_verifier).toBeTruthy();
    const tables = (await api.get('/integrations/productivity/tables', { connectionId: id })).json();
    expect(tables.data).toEqual([expect.objectContaining({ id: 'appA:tblLeads', name: 'CRM / Leads' })]);
    for (let i = 0; i < 3; i++) {
      const r = await api.post('/integrations/productivity/tables/appA:tblLeads/rows', {
        connectionId: id,
        fields: { Name: `Lead ${i}`, Score: i },
      });
      expect(r.statusCode, r.body).toBe(201);
    }
    const rows = await pageAll(api, '/integrations/productivity/tables/appA:tblLeads/rows', {
      connectionId: id,
      limit: 2,
    });
    expect(rows.items.map((r) => (r.fields as { Name: string }).Name)).toEqual([
      'Lead 0',
      'Lead 1',
      'Lead 2',
    ]);
    expect(
      (await api.get('/integrations/productivity/tables/nope/rows', { connectionId: id })).statusCode,
    ).toBe(400);
    const docs = await api.get('/integrations/productivity/documents', { connectionId: id });
    expect(docs.statusCode).toBe(400);
    expect(docs.json().error.code).toBe('OPERATION_NOT_SUPPORTED');
  });
});
