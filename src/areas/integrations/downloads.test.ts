import crypto from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import {
  connect,
  integrationsApp,
  type Providers,
  startProviders,
  tenant,
} from '../../../test/integrations-kit.ts';
import type { ManualClock } from '../../core/clock.ts';

// Storage downloads as a signed URL on Pier that streams the provider's bytes (downloads.ts): a 30 MB file
// the fake sends slowly reaches the client while most of it is still unsent (so Pier never held it whole),
// and an altered or expired signature is refused.

let p: Providers & { close(): Promise<void> };
let t: TestApp;

beforeAll(async () => {
  p = await startProviders();
  t = await integrationsApp(p, { listen: true });
});
afterAll(async () => {
  await t?.close();
  await p?.close();
});

const MB = 1024 * 1024;
const chunkOf = (i: number) => Buffer.alloc(64 * 1024, i % 251);

/** GETs a Pier URL for real (not inject, which buffers), reporting bytes as they arrive. */
function fetchStreamed(path: string, onBytes: (total: number) => void) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; size: number; sha: string }>(
    (ok, fail) => {
      http
        .get(`${t.url}${path}`, (res) => {
          const hash = crypto.createHash('sha256');
          let size = 0;
          res.on('data', (c: Buffer) => {
            hash.update(c);
            size += c.length;
            onBytes(size);
          });
          res.on('end', () =>
            ok({ status: res.statusCode ?? 0, headers: res.headers, size, sha: hash.digest('hex') }),
          );
          res.on('error', fail);
        })
        .on('error', fail);
    },
  );
}

const pathOf = (url: string) => new URL(url).pathname;

describe('download URLs', () => {
  it('streams a 30 MB file without holding it: the client has bytes while the provider has sent 2 MB', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.drive, 'google-drive');
    const chunks = (30 * MB) / (64 * 1024);
    let clientBytes = 0;
    let sentAtFirstByte = -1;
    let sent = 0;
    const expected = crypto.createHash('sha256');
    for (let i = 0; i < chunks; i++) expected.update(chunkOf(i));
    p.drive.store.files.push({
      id: 'big1',
      name: 'video ünïcode.bin',
      mimeType: 'application/octet-stream',
      parents: ['root'],
      createdTime: new Date().toISOString(),
      modifiedTime: new Date().toISOString(),
      size: String(30 * MB),
      async write(res) {
        for (let i = 0; i < chunks; i++) {
          if (sent === 2 * MB) {
            // Held here until the client has received bytes: were Pier buffering the whole file, the client
            // would get none before the end, and this wait would time out.
            const until = Date.now() + 10_000;
            while (clientBytes === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
          }
          if (!res.write(chunkOf(i))) await new Promise((r) => res.once('drain', r));
          sent += 64 * 1024;
        }
      },
    });
    const made = await api.get('/integrations/storage/files/big1/download-url', { connectionId: id });
    expect(made.statusCode, made.body).toBe(200);
    expect(made.json().url).toMatch(/^http:\/\/pier\.test\/v1\/integrations\/downloads\/[\w-]+\.[\w-]+$/);
    expect(Date.parse(made.json().expiresAt) - t.clock.now().getTime()).toBeLessThanOrEqual(300_000);
    const got = await fetchStreamed(pathOf(made.json().url), (n) => {
      if (clientBytes === 0) sentAtFirstByte = sent;
      clientBytes = n;
    });
    expect(got.status).toBe(200);
    expect(sentAtFirstByte).toBeGreaterThanOrEqual(0);
    expect(sentAtFirstByte).toBeLessThanOrEqual(2 * MB);
    expect(got.size).toBe(30 * MB);
    expect(got.sha).toBe(expected.digest('hex'));
    expect(got.headers['content-type']).toBe('application/octet-stream');
    expect(got.headers['content-length']).toBe(String(30 * MB));
    expect(got.headers['content-disposition']).toContain("filename*=UTF-8''video%20%C3%BCn%C3%AFcode.bin");
  }, 60_000);

  it('refuses an altered, foreign or expired link, and another tenant cannot make one', async () => {
    const { api } = await tenant(t);
    const id = await connect(t, api, p.drive, 'google-drive');
    const up = await api.post('/integrations/storage/files', {
      connectionId: id,
      name: 'a.txt',
      mimeType: 'text/plain',
      data: Buffer.from('hello').toString('base64'),
    });
    const fileId = up.json().id;
    const made = (
      await api.get(`/integrations/storage/files/${fileId}/download-url`, { connectionId: id, expiresIn: 60 })
    ).json();
    const path = pathOf(made.url);
    const ok = await t.app.inject({ method: 'GET', url: path });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('hello');
    expect(ok.headers['content-type']).toBe('text/plain');

    // Another file id in the same signed envelope: the signature no longer matches.
    const [payload, sig] = path.split('/').pop()!.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, f: 'other' })).toString('base64url');
    for (const bad of [`${forged}.${sig}`, `${payload}.${sig!.slice(0, -2)}xx`, 'nonsense']) {
      const r = await t.app.inject({ method: 'GET', url: `/v1/integrations/downloads/${bad}` });
      expect(r.statusCode, bad).toBe(403);
      expect(r.json().error.code).toBe('DOWNLOAD_URL_INVALID');
    }
    (t.clock as ManualClock).advance(61_000);
    const late = await t.app.inject({ method: 'GET', url: path });
    expect(late.statusCode).toBe(403);
    expect(late.json().error.message).toContain('expired');

    const other = await tenant(t);
    const foreign = await other.api.get(`/integrations/storage/files/${fileId}/download-url`, {
      connectionId: id,
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('CONNECTION_NOT_FOUND');
    const crm = await connect(t, api, p.hubspot, 'hubspot');
    const wrong = await api.get('/integrations/storage/files/x/download-url', { connectionId: crm });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.code).toBe('OPERATION_NOT_SUPPORTED');
    const bad = await api.get('/integrations/storage/files/x/download-url', {
      connectionId: id,
      expiresIn: 99999,
    });
    expect(bad.statusCode).toBe(400);
  });
});
