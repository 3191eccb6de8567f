import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';
import { KEEP_PER_CONNECTION } from './call-logs.ts';
import { openSession } from './connection-sessions.ts';
import { findConnection } from './connections.ts';

// Per-connection call logs: every provider call a unified operation or passthrough makes is logged with
// method, host, path, status and duration; credentials in query strings are redacted and the connection's
// tokens never appear; the newest 200 are kept; another tenant's connection is a 404.

let p: Providers & { close(): Promise<void> };
let t: TestApp;
beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p);
});
afterAll(async () => {
  await t?.close();
  await p?.close();
});

type Log = { method: string; host: string; path: string; status: number | null; durationMs: number };

describe('call logs', () => {
  it('logs unified and passthrough calls with redacted credentials, newest first, readable by API and dashboard', async () => {
    const { api, tenant: tn } = await tenant(t);
    const id = await connect(t, api, p.drive, 'google-drive');
    expect((await api.get('/integrations/storage/files', { connectionId: id })).statusCode).toBe(200);
    const missing = await api.get('/integrations/storage/files/nope/download', { connectionId: id });
    expect(missing.statusCode).toBe(404);
    const pass = await api.post('/integrations/passthrough', {
      connectionId: id,
      method: 'GET',
      path: '/drive/v3/about',
      query: { access_token: 'leaked-by-the-app-123', fields: 'user', api_key: 'k-999999' },
    });
    expect(pass.statusCode).toBe(200);

    const res = await api.get(`/integrations/connections/${id}/logs`);
    expect(res.statusCode, res.body).toBe(200);
    const logs: Log[] = res.json().data;
    // Newest first: the passthrough, the 404 download's metadata read, the list (and the account read at
    // connect time, last).
    expect(logs[0]).toMatchObject({ method: 'GET', host: new URL(p.drive.url).host, status: 200 });
    expect(logs[0]!.path).toBe('/drive/v3/about?access_token=[redacted]&fields=user&api_key=[redacted]');
    expect(logs[1]).toMatchObject({
      method: 'GET',
      status: 404,
      path: '/drive/v3/files/nope?fields=id%2Cname%2CmimeType',
    });
    expect(logs[2]!.path).toMatch(/^\/drive\/v3\/files\?q=/);
    expect(logs.at(-1)!.path).toMatch(/^\/drive\/v3\/about/);
    for (const l of logs) expect(l.durationMs).toBeGreaterThanOrEqual(0);
    // The connection's own token is in every request's header, never in a log.
    const token = p.drive.calls.at(-1)!.token;
    expect(token.length).toBeGreaterThan(10);
    expect(res.body).not.toContain(token);
    expect(res.body).not.toContain('leaked-by-the-app');

    expect((await api.get(`/integrations/connections/${id}/logs`, { limit: 2 })).json().data).toHaveLength(2);
    const dash = await t.call(
      'listIntegrationCallLogsForDashboard',
      { orgSlug: tn.org.slug, connectionId: id, limit: 3 },
      tn.owner.token,
    );
    expect(dash.statusCode, dash.body).toBe(200);
    expect(dash.json().data.map((l: Log) => l.path)).toEqual(logs.slice(0, 3).map((l) => l.path));

    const other = await tenant(t);
    const foreign = await other.api.get(`/integrations/connections/${id}/logs`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('CONNECTION_NOT_FOUND');
    const otherDash = await t.call(
      'listIntegrationCallLogsForDashboard',
      { orgSlug: other.tenant.org.slug, connectionId: id },
      other.tenant.owner.token,
    );
    expect(otherDash.statusCode).toBe(404);
    expect((await api.get(`/integrations/connections/${id}/logs`, { limit: 0 })).statusCode).toBe(400);
  });

  it('logs each attempt of a retried call and keeps only the newest 200 per connection', async () => {
    const { api, tenant: tn } = await tenant(t);
    const id = await connect(t, api, p.slack, 'slack');
    p.slack.rateLimitNext(1, 0);
    expect((await api.get('/integrations/communication/channels', { connectionId: id })).statusCode).toBe(
      200,
    );
    const two: Log[] = (await api.get(`/integrations/connections/${id}/logs`, { limit: 2 })).json().data;
    expect(two.map((l) => l.status)).toEqual([200, 429]);

    // Straight through the service: the API's own rate limit would stop 200 requests in a row.
    const row = await findConnection(t.deps, { orgId: tn.org.id, environment: 'production' }, id);
    const { call } = await openSession(t.deps, row, { raw: true });
    const calls = KEEP_PER_CONNECTION + 15;
    for (let i = 0; i < calls; i++) {
      const r = await call({ method: 'GET', path: '/conversations.list', query: { n: String(i) } });
      expect(r.status).toBe(200);
    }
    const all: Log[] = (await api.get(`/integrations/connections/${id}/logs`, { limit: 200 })).json().data;
    expect(all).toHaveLength(KEEP_PER_CONNECTION);
    expect(all[0]!.path).toBe(`/api/conversations.list?n=${calls - 1}`);
    expect(all.at(-1)!.path).toBe(`/api/conversations.list?n=${calls - KEEP_PER_CONNECTION}`);
    const rows = await t.deps.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM integration_call_logs WHERE connection_id = $1',
      [id],
    );
    expect(rows.rows[0]!.n).toBe(KEEP_PER_CONNECTION);
  }, 60_000);
});
