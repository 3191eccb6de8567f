import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { settled, webdataTestApp } from '../../../test/webdata-kit.ts';

// The remote side's failures, from a real local server misbehaving in each way: POST /webdata/documents
// (and /webdata/map, also answered in the request) answer a 4xx — 422 with a REMOTE_* code, or the guard's
// 400 for a blocked address — never a 5xx that clients would retry; and an extraction of the same URL
// stores the same code as its errorCode, with the same words as its error.

describe('web data: remote failures are 4xx with the codes records carry', { timeout: 120_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let bad: http.Server;
  let base: string;
  let closedPort: number;
  const timers = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    bad = http.createServer((req, res) => {
      switch (req.url) {
        case '/loop.pdf':
          res.writeHead(302, { location: '/loop.pdf' }).end();
          return;
        case '/drip.pdf': {
          // Headers at once, then a byte every 200 ms for ever: only the whole exchange's deadline ends it.
          res.writeHead(200, { 'content-type': 'application/pdf' });
          res.write('%PDF-1.4\n');
          const timer = setInterval(() => res.write('%'), 200);
          timers.add(timer);
          res.on('close', () => clearInterval(timer));
          return;
        }
        case '/silent.pdf':
          return; // never answers
        case '/huge.pdf': {
          // 26 MB, chunked (no Content-Length to refuse early): over the 25 MB limit while streaming.
          res.writeHead(200, { 'content-type': 'application/pdf' });
          const chunk = Buffer.alloc(1024 * 1024, 0x25);
          let sent = 0;
          const more = () => {
            while (sent < 26) {
              sent++;
              if (!res.write(chunk)) return void res.once('drain', more);
            }
            res.end();
          };
          res.on('error', () => {});
          more();
          return;
        }
        case '/missing.pdf':
          res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
          return;
        case '/down.pdf':
          res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance');
          return;
        case '/reset.pdf':
          req.socket.destroy();
          return;
        default:
          res.writeHead(404).end();
      }
    });
    await new Promise<void>((ok) => bad.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(bad.address() as AddressInfo).port}`;
    // A port nothing listens on: take one, then close it.
    const probe = http.createServer();
    await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((ok) => probe.close(() => ok()));
    t = await webdataTestApp({ WEBDATA_FETCH_TIMEOUT_MS: '5000' });
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    await t?.close();
    bad?.closeAllConnections();
    bad?.close();
  });

  const cases: [what: string, path: () => string, code: string, words: RegExp][] = [
    ['a redirect loop', () => `${base}/loop.pdf`, 'REMOTE_TOO_MANY_REDIRECTS', /^Too many redirects: /],
    ['a slow drip', () => `${base}/drip.pdf`, 'REMOTE_TIMEOUT', /^Timeout: /],
    ['no answer', () => `${base}/silent.pdf`, 'REMOTE_TIMEOUT', /^Timeout: /],
    ['a file over 25 MB', () => `${base}/huge.pdf`, 'REMOTE_TOO_LARGE', /^Too large: /],
    ['a 404', () => `${base}/missing.pdf`, 'REMOTE_HTTP_ERROR', /answered 404\.$/],
    ['a 503', () => `${base}/down.pdf`, 'REMOTE_HTTP_ERROR', /answered 503\.$/],
    ['a reset connection', () => `${base}/reset.pdf`, 'REMOTE_UNREACHABLE', /failed/],
    ['a closed port', () => `http://127.0.0.1:${closedPort}/x.pdf`, 'REMOTE_UNREACHABLE', /failed/],
  ];

  for (const [what, url, code, words] of cases) {
    it(`answers ${what} with 422 ${code}, the code an extraction of it stores`, async () => {
      const res = await t.v1('POST', '/webdata/documents', a.live, { url: url() });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.code).toBe(code);
      expect(res.json().error.message).toMatch(words);
      // Never Pier's internals or a gateway status.
      expect(res.json().error.message).not.toMatch(/internal|stack|ECONN/i);

      const created = await t.v1('POST', '/webdata/extractions', a.live, { url: url(), mode: 'raw' });
      const x = await settled(t, a.live, `/webdata/extractions/${created.json().id}`);
      expect(x.status).toBe('failed');
      expect(x.errorCode).toBe(code);
      // The words differ only where the record speaks of a page and documents of a document, and in the
      // size limit (15 MB for a page, 25 MB for a document).
      const same = (m: string) => m.replace('page', 'document').replace(/\d+ bytes/, 'N bytes');
      expect(same(x.error)).toBe(same(res.json().error.message));
    });
  }

  it('answers map of a misbehaving site with a 4xx too, and a blocked address with the guard’s 400', async () => {
    const loop = await t.v1('POST', '/webdata/map', a.live, { url: `${base}/loop.pdf` });
    expect(loop.statusCode, loop.body).toBe(422);
    expect(loop.json().error.code).toBe('REMOTE_TOO_MANY_REDIRECTS');
    const silent = await t.v1('POST', '/webdata/map', a.live, { url: `${base}/silent.pdf` });
    expect(silent.statusCode).toBe(422);
    const blocked = await t.v1('POST', '/webdata/documents', a.live, { url: 'http://169.254.169.254/x.pdf' });
    expect(blocked.statusCode).toBe(400);
    expect(blocked.json().error.code).toBe('URL_NOT_ALLOWED');
    const x = await settled(
      t,
      a.live,
      `/webdata/extractions/${(await t.v1('POST', '/webdata/extractions', a.live, { url: 'http://169.254.169.254/x' })).json().id}`,
    );
    expect(x.errorCode).toBe('URL_NOT_ALLOWED');
  });
});
