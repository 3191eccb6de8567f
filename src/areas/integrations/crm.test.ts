import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';

// CRM end to end through HubSpot's fake: paging across provider pages, create/get/update/delete, companies,
// deals, provider errors mapped to Pier codes, 429 with Retry-After, cursors bound to their connection.

let p: Providers & { close(): Promise<void> };
let t: TestApp;

beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p);
  const now = new Date().toISOString();
  for (let i = 1; i <= 120; i++) {
    p.hubspot.store.contacts.push({
      id: String(i),
      properties: {
        firstname: `First${i}`,
        lastname: `Last${i}`,
        email: `c${i}@acme.test`,
        phone: null,
        jobtitle: i === 1 ? 'CEO' : null,
      },
      createdAt: now,
      updatedAt: now,
      archived: false,
    });
  }
});
afterAll(async () => {
  await t?.close();
  await p?.close();
});

describe('crm', () => {
  it('pages contacts as { data, nextCursor } across the provider pages, keeping the raw record', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.hubspot, 'hubspot');
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api.get('/integrations/crm/contacts', {
        connectionId: id,
        ...(cursor ? { cursor } : {}),
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      seen.push(...body.data.map((c: { id: string }) => c.id));
      cursor = body.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3); // default limit 50
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
    const first = (await api.get('/integrations/crm/contacts', { connectionId: id, limit: 2 })).json();
    expect(first.data[0]).toMatchObject({
      id: '1',
      firstName: 'First1',
      lastName: 'Last1',
      email: 'c1@acme.test',
      phone: null,
      title: 'CEO',
      companyId: null,
      rawData: { id: '1', properties: expect.objectContaining({ firstname: 'First1' }) },
    });
    expect((await api.get('/integrations/crm/contacts', { connectionId: id, limit: 101 })).statusCode).toBe(
      400,
    );
    expect((await api.get('/integrations/crm/contacts')).json().error.code).toBe('VALIDATION_ERROR');

    // A cursor is bound to its connection and list: another connection or a forged cursor is refused.
    const other = await connect(t, api, p.hubspot, 'hubspot', 'user-2');
    const onOther = await api.get('/integrations/crm/contacts', {
      connectionId: other,
      cursor: first.nextCursor,
    });
    expect(onOther.statusCode).toBe(400);
    expect(onOther.json().error.code).toBe('INVALID_CURSOR');
    const onDeals = await api.get('/integrations/crm/deals', { connectionId: id, cursor: first.nextCursor });
    expect(onDeals.json().error.code).toBe('INVALID_CURSOR');
    expect(
      (await api.get('/integrations/crm/contacts', { connectionId: id, cursor: 'abc.def' })).json().error
        .code,
    ).toBe('INVALID_CURSOR');
  });

  it('creates, reads, updates and deletes a contact; connectionId in the query or the body', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.hubspot, 'hubspot');
    const created = await api.post('/integrations/crm/contacts', {
      connectionId: id,
      firstName: 'Grace',
      lastName: 'Hopper',
      email: 'grace@navy.test',
      phone: '+1 555 0100',
    });
    expect(created.statusCode, created.body).toBe(201);
    const c = created.json();
    expect(c).toMatchObject({
      firstName: 'Grace',
      lastName: 'Hopper',
      email: 'grace@navy.test',
      phone: '+1 555 0100',
    });
    expect(p.hubspot.store.contacts.find((x) => x.id === c.id)!.properties).toMatchObject({
      firstname: 'Grace',
      email: 'grace@navy.test',
    });

    const got = await api.get(`/integrations/crm/contacts/${c.id}`, { connectionId: id });
    expect(got.json()).toMatchObject({ id: c.id, email: 'grace@navy.test' });
    const upd = await api.patch(`/integrations/crm/contacts/${c.id}`, {
      connectionId: id,
      title: 'Rear Admiral',
    });
    expect(upd.statusCode, upd.body).toBe(200);
    expect(upd.json().title).toBe('Rear Admiral');
    const mismatch = await api.patch(`/integrations/crm/contacts/${c.id}?connectionId=${id}`, {
      connectionId: '00000000-0000-4000-8000-000000000000',
    });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().error.message).toContain('connectionId differs');

    const del = await api.del(`/integrations/crm/contacts/${c.id}?connectionId=${id}`);
    expect(del.json()).toEqual({ success: true });
    const gone = await api.get(`/integrations/crm/contacts/${c.id}`, { connectionId: id });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.code).toBe('PROVIDER_RESOURCE_NOT_FOUND');
    expect(gone.json().error.message).toContain('Object not found');

    // A duplicate e-mail: HubSpot's 409 comes back as a 400 with its message.
    const dup = await api.post(`/integrations/crm/contacts?connectionId=${id}`, { email: 'c1@acme.test' });
    expect(dup.statusCode).toBe(400);
    expect(dup.json().error.code).toBe('PROVIDER_REJECTED');
    expect(dup.json().error.message).toContain('Contact already exists');
    expect(
      (await api.post('/integrations/crm/contacts', { email: 'not-an-email', connectionId: id })).statusCode,
    ).toBe(400);
  });

  it('creates and lists companies and deals', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.hubspot, 'hubspot');
    const co = await api.post('/integrations/crm/companies', {
      connectionId: id,
      name: 'Acme',
      domain: 'acme.test',
      industry: 'Tools',
    });
    expect(co.statusCode).toBe(201);
    expect(co.json()).toMatchObject({ name: 'Acme', domain: 'acme.test', industry: 'Tools' });
    expect((await api.post('/integrations/crm/companies', { connectionId: id })).statusCode).toBe(400);
    const deal = await api.post('/integrations/crm/deals', {
      connectionId: id,
      name: 'Big one',
      amount: 1200.5,
      stage: 'qualifiedtobuy',
    });
    expect(deal.json()).toMatchObject({ name: 'Big one', amount: 1200.5, stage: 'qualifiedtobuy' });
    expect(
      (await api.post('/integrations/crm/deals', { connectionId: id, name: 'x', amount: 'lots' })).statusCode,
    ).toBe(400);
    const companies = (await api.get('/integrations/crm/companies', { connectionId: id })).json();
    expect(companies.data.map((x: { name: string }) => x.name)).toContain('Acme');
    expect(companies.nextCursor).toBeNull();
    const deals = (await api.get('/integrations/crm/deals', { connectionId: id })).json();
    expect(deals.data.map((x: { amount: number }) => x.amount)).toContain(1200.5);
  });

  it('waits out a provider 429 with Retry-After, and answers 429 when it asks too long', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.hubspot, 'hubspot');
    p.hubspot.rateLimitNext(1, 1);
    const started = Date.now();
    const ok = await api.get('/integrations/crm/companies', { connectionId: id });
    expect(ok.statusCode).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    p.hubspot.rateLimitNext(1, 120);
    const limited = await api.get('/integrations/crm/companies', { connectionId: id });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('PROVIDER_RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe('120');
  });

  it('says so when a connector does not offer the category', async () => {
    const { api } = await tenant(t);
    const slack = await connect(t, api, p.slack, 'slack');
    const res = await api.get('/integrations/crm/contacts', { connectionId: slack });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('OPERATION_NOT_SUPPORTED');
    expect(res.json().error.message).toContain("'slack'");
  });
});
