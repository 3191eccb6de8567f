import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';

// A sync run through the real job queue and its workers: `POST /syncs/{id}/run` queues `integrations.sync`,
// a worker takes it and the run's counts show on the sync (the schedule's own tick is syncs.test.ts's).

let p: Providers & { close(): Promise<void> };
let t: TestApp;

beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p, { background: true });
  const at = new Date().toISOString();
  for (let i = 1; i <= 30; i++)
    p.hubspot.store.deals.push({
      id: String(i),
      properties: { dealname: `Deal ${i}`, amount: String(i * 100), dealstage: 'appointmentscheduled' },
      createdAt: at,
      updatedAt: at,
      archived: false,
    });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await p?.close();
});

describe('syncs on the job queue', () => {
  it('runs a sync queued by POST /syncs/{id}/run on a worker', async () => {
    const { api } = await tenant(t);
    const conn = await connect(t, api, p.hubspot, 'hubspot');
    const sync = (await api.post('/integrations/syncs', { connectionId: conn, model: 'deals' })).json();
    const queued = await api.post(`/integrations/syncs/${sync.id}/run`, {});
    expect(queued.statusCode, queued.body).toBe(202);
    const end = Date.now() + 30_000;
    let view = (await api.get(`/integrations/syncs/${sync.id}`)).json();
    while (view.lastRun?.status !== 'succeeded' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      view = (await api.get(`/integrations/syncs/${sync.id}`)).json();
    }
    expect(view).toMatchObject({ records: 30, lastRun: { status: 'succeeded', added: 30 } });
    const deals = (
      await api.get('/integrations/records', { connectionId: conn, model: 'deals', limit: 5 })
    ).json();
    expect(deals.data[0].record).toMatchObject({
      name: expect.stringMatching(/^Deal /),
      amount: expect.any(Number),
    });
  }, 60_000);
});
