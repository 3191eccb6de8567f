import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';

// Storage (Google Drive's fake: page tokens, multipart upload, alt=media download) and communication
// (Slack's fake: cursor pages, ok:false errors with HTTP 200) end to end.

let p: Providers & { close(): Promise<void> };
let t: TestApp;

beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p, process.env.DEBUG_INT ? { logStream: process.stderr } : {});
  for (let i = 1; i <= 7; i++)
    p.slack.store.channels.push({ id: `C${i}`, name: `chan-${i}`, is_private: i === 7, num_members: i });
  p.slack.store.messages.set('C1', []);
  for (let i = 1; i <= 3; i++)
    p.slack.store.users.push({
      id: `U${i}`,
      name: `u${i}`,
      real_name: `User ${i}`,
      is_bot: false,
      profile: { email: `u${i}@acme.test` },
    });
});
afterAll(async () => {
  await t?.close();
  await p?.close();
});

describe('storage (google drive)', () => {
  it('uploads, lists by folder across pages, downloads and deletes files; creates and lists folders', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.drive, 'google-drive');
    const folder = await api.post('/integrations/storage/folders', { connectionId: id, name: 'Reports' });
    expect(folder.statusCode, folder.body).toBe(201);
    const folderId = folder.json().id;
    expect(folder.json()).toMatchObject({ name: 'Reports', parentId: 'root' });
    const sub = await api.post('/integrations/storage/folders', {
      connectionId: id,
      name: 'Q1',
      parentId: folderId,
    });
    expect(sub.json().parentId).toBe(folderId);
    const folders = (await api.get('/integrations/storage/folders', { connectionId: id })).json();
    expect(folders.data.map((f: { name: string }) => f.name)).toEqual(['Reports']);
    const inside = (
      await api.get('/integrations/storage/folders', { connectionId: id, parentId: folderId })
    ).json();
    expect(inside.data.map((f: { name: string }) => f.name)).toEqual(['Q1']);

    const content = Buffer.from('hello,world\n1,2\n');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const up = await api.post('/integrations/storage/files', {
        connectionId: id,
        name: `r${i}.csv`,
        mimeType: 'text/csv',
        data: content.toString('base64'),
        folderId,
      });
      expect(up.statusCode, up.body).toBe(201);
      expect(up.json()).toMatchObject({
        name: `r${i}.csv`,
        mimeType: 'text/csv',
        size: content.length,
        folderId,
      });
      ids.push(up.json().id);
    }
    const page1 = (
      await api.get('/integrations/storage/files', { connectionId: id, folderId, limit: 2 })
    ).json();
    expect(page1.data).toHaveLength(2);
    expect(page1.nextCursor).toEqual(expect.any(String));
    const page2 = (
      await api.get('/integrations/storage/files', {
        connectionId: id,
        folderId,
        limit: 2,
        cursor: page1.nextCursor,
      })
    ).json();
    expect(page2.data.map((f: { id: string }) => f.id)).toEqual([ids[2]]);
    expect(page2.nextCursor).toBeNull();
    // A cursor of one folder is not a cursor of another.
    const wrong = await api.get('/integrations/storage/files', {
      connectionId: id,
      limit: 2,
      cursor: page1.nextCursor,
    });
    expect(wrong.json().error.code).toBe('INVALID_CURSOR');
    // Root holds no files (folders are not files).
    expect((await api.get('/integrations/storage/files', { connectionId: id })).json().data).toEqual([]);

    const dl = await api.get(`/integrations/storage/files/${ids[0]}/download`, { connectionId: id });
    expect(dl.statusCode, dl.body).toBe(200);
    expect(dl.json()).toEqual({ data: content.toString('base64'), mimeType: 'text/csv', filename: 'r0.csv' });
    expect((await api.del(`/integrations/storage/files/${ids[0]}?connectionId=${id}`)).json()).toEqual({
      success: true,
    });
    const missing = await api.get(`/integrations/storage/files/${ids[0]}/download`, { connectionId: id });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('PROVIDER_RESOURCE_NOT_FOUND');

    const bad = await api.post('/integrations/storage/files', {
      connectionId: id,
      name: 'x',
      mimeType: 'text/plain',
      data: '***',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_ERROR');
  });
});

describe('communication (slack)', () => {
  it('pages channels and users, posts and lists messages, maps ok:false errors', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.slack, 'slack');
    const c1 = (await api.get('/integrations/communication/channels', { connectionId: id, limit: 5 })).json();
    expect(c1.data).toHaveLength(5);
    expect(c1.data[0]).toMatchObject({
      id: 'C1',
      name: 'chan-1',
      isPrivate: false,
      memberCount: 1,
      rawData: { id: 'C1' },
    });
    const c2 = (
      await api.get('/integrations/communication/channels', {
        connectionId: id,
        limit: 5,
        cursor: c1.nextCursor,
      })
    ).json();
    expect(c2.data.map((c: { id: string }) => c.id)).toEqual(['C6', 'C7']);
    expect(c2.data[1].isPrivate).toBe(true);
    expect(c2.nextCursor).toBeNull();

    const posted = await api.post('/integrations/communication/messages', {
      connectionId: id,
      channelId: 'C1',
      content: 'Hello team',
    });
    expect(posted.statusCode, posted.body).toBe(201);
    expect(posted.json()).toMatchObject({ channelId: 'C1', content: 'Hello team', userId: 'UBOT' });
    await api.post('/integrations/communication/messages', {
      connectionId: id,
      channelId: 'C1',
      content: 'Second',
    });
    const msgs = (
      await api.get('/integrations/communication/messages', { connectionId: id, channelId: 'C1' })
    ).json();
    expect(msgs.data.map((m: { content: string }) => m.content)).toEqual(['Second', 'Hello team']);
    expect(msgs.data[0].createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    // A provider's time that no Date can hold comes back as null, never a 500.
    p.slack.store.messages
      .get('C1')!
      .push({ type: 'message', user: 'U1', text: 'odd', ts: '1712345678.1e299' });
    const odd = await api.get('/integrations/communication/messages', { connectionId: id, channelId: 'C1' });
    expect(odd.statusCode, odd.body).toBe(200);
    expect(odd.json().data[0]).toMatchObject({ content: 'odd', createdAt: null });
    expect((await api.get('/integrations/communication/messages', { connectionId: id })).statusCode).toBe(
      400,
    );
    const nochan = await api.post('/integrations/communication/messages', {
      connectionId: id,
      channelId: 'CX',
      content: 'x',
    });
    expect(nochan.statusCode).toBe(404);
    expect(nochan.json().error.message).toContain('channel_not_found');

    const users = (await api.get('/integrations/communication/users', { connectionId: id })).json();
    expect(users.data).toHaveLength(3);
    expect(users.data[0]).toMatchObject({ id: 'U1', name: 'User 1', email: 'u1@acme.test', isBot: false });
  });

  it('refreshes a Slack token on its ok:false token_expired answer', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.slack, 'slack');
    const before = p.slack.tokenGrants.filter((g) => g.grant === 'refresh_token').length;
    p.slack.expireAccessTokens();
    const res = await api.get('/integrations/communication/users', { connectionId: id });
    expect(res.statusCode, res.body).toBe(200);
    expect(p.slack.tokenGrants.filter((g) => g.grant === 'refresh_token').length).toBe(before + 1);
  });
});
