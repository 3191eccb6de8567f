import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { ApiError } from '../errors.ts';
import { type SafeFetchOptions, safeFetch } from './safe-fetch.ts';

// Real HTTP servers on 127.0.0.1: loopback is exactly what the guard refuses by default, so every test that
// expects a response opens it the way an operator would, with OUTBOUND_ALLOW.

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };

function startServer(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  return {
    seen,
    server,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let base: string;
let otherBase: string;
const main = startServer((req, res) => {
  const url = new URL(req.url!, 'http://x');
  switch (url.pathname) {
    case '/ok':
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
      return;
    case '/redirect':
      res
        .writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to')! })
        .end();
      return;
    case '/loop': {
      const n = Number(url.searchParams.get('n') ?? 0);
      res.writeHead(302, { location: n > 0 ? `/loop?n=${n - 1}` : '/ok' }).end();
      return;
    }
    case '/hang':
      return; // never answers
    case '/slow-body':
      res.writeHead(200);
      res.write('a');
      return; // never ends
    case '/big':
      res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000));
      return;
    case '/big-chunked':
      res.writeHead(200);
      for (let i = 0; i < 10; i++) res.write(Buffer.alloc(500));
      res.end();
      return;
    case '/echo':
      res.writeHead(200, { 'content-type': 'text/plain' }).end(req.method);
      return;
    default:
      res.writeHead(404).end('nope');
  }
});
const other = startServer((_req, res) => {
  res.writeHead(200).end('other');
});

beforeAll(async () => {
  base = await main.listen();
  otherBase = await other.listen();
});
afterAll(async () => {
  await main.close();
  await other.close();
});

const allowing = (list: string): SafeFetchOptions => ({
  outboundAllow: loadConfig({ OUTBOUND_ALLOW: list }).outboundAllow,
});
const loop = allowing('127.0.0.1/32');

async function refused(url: string, opts: SafeFetchOptions = {}): Promise<ApiError> {
  try {
    await safeFetch(url, opts);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error(`${url} was fetched`);
}

describe('safeFetch', () => {
  it('refuses loopback by default and fetches it only when OUTBOUND_ALLOW lists it', async () => {
    const before = main.seen.length;
    const err = await refused(`${base}/ok`);
    expect(err.code).toBe('URL_NOT_ALLOWED');
    expect(err.status).toBe(400);
    expect(err.message).toContain('loopback');
    expect(main.seen.length).toBe(before); // nothing reached the server

    const res = await safeFetch(`${base}/ok`, loop);
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.json()).toEqual({ hello: 'world' });
    expect(res.headers.get('content-type')).toBe('application/json');
  });

  it('opens only what OUTBOUND_ALLOW lists: a CIDR, or a host name whatever it resolves to', async () => {
    const port = new URL(base).port;
    // A listed CIDR passes; an address of the same kind outside it does not.
    expect((await safeFetch(`${base}/ok`, allowing('127.0.0.0/8'))).status).toBe(200);
    expect((await refused(`http://127.0.0.2:${port}/ok`, loop)).message).toContain('loopback');
    const toPrivate = async () => [{ address: '10.0.0.7', family: 4 as const }];
    expect((await refused('http://intranet.example/', { ...loop, resolve: toPrivate })).message).toContain(
      'private',
    );
    // A listed name reaches its (private) addresses; another name on the same address does not.
    const toLoopback = async () => [{ address: '127.0.0.1', family: 4 as const }];
    const byName = allowing('intranet.example');
    const res = await safeFetch(`http://intranet.example:${port}/echo`, { ...byName, resolve: toLoopback });
    expect(res.text()).toBe('GET');
    const wild = allowing('*.corp.example');
    expect(
      (await safeFetch(`http://a.b.corp.example:${port}/ok`, { ...wild, resolve: toLoopback })).status,
    ).toBe(200);
    expect((await refused(`http://other.example:${port}/ok`, { ...byName, resolve: toLoopback })).code).toBe(
      'URL_NOT_ALLOWED',
    );
    // A literal address is judged by ranges only, never by the names listed.
    expect((await refused(`${base}/ok`, byName)).code).toBe('URL_NOT_ALLOWED');
  });

  it('never fetches the cloud metadata address, even when OUTBOUND_ALLOW covers it', async () => {
    expect(() => loadConfig({ OUTBOUND_ALLOW: '169.254.169.254' })).toThrow(/OUTBOUND_ALLOW.*metadata/);
    expect(() => loadConfig({ OUTBOUND_ALLOW: 'fd00:ec2::254/128' })).toThrow(/metadata/);
    const wide = allowing('169.254.0.0/16, fd00::/8, 127.0.0.1/32, metadata.internal');
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/']) {
      expect((await refused(url, wide)).message, url).toContain('metadata');
    }
    const toMetadata = async () => [{ address: '169.254.169.254', family: 4 as const }];
    expect((await refused('http://metadata.internal/', { ...wide, resolve: toMetadata })).message).toContain(
      'metadata',
    );
    const hop = `${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/')}`;
    expect((await refused(hop, wide)).message).toContain('metadata');
  });

  it('refuses every spelling of a loopback or private literal', async () => {
    const port = new URL(base).port;
    for (const url of [
      `http://[::ffff:127.0.0.1]:${port}/ok`,
      `http://[::1]:${port}/ok`,
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://0x7f.0.0.1/',
      'http://127.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/',
      'http://10.0.0.1/',
      'http://0.0.0.0/',
    ]) {
      const err = await refused(url);
      expect(err.code, url).toBe('URL_NOT_ALLOWED');
    }
  });

  it('refuses a host name that resolves to loopback without revealing the address', async () => {
    const err = await refused(`http://localhost:${new URL(base).port}/ok`);
    expect(err.code).toBe('URL_NOT_ALLOWED');
    expect(err.message).toContain('localhost');
    expect(err.message).not.toContain('127.0.0.1');
  });

  it('refuses a name with any blocked address among its answers', async () => {
    const resolve = async () => [
      { address: '93.184.216.34', family: 4 as const },
      { address: '10.0.0.7', family: 4 as const },
    ];
    expect((await refused('http://mixed.example/', { resolve })).message).toContain('private');
  });

  it('connects to the address it checked (no second DNS lookup)', async () => {
    const port = new URL(base).port;
    let lookups = 0;
    const resolve = async () => {
      lookups++;
      return [{ address: '127.0.0.1', family: 4 as const }];
    };
    const res = await safeFetch(`http://pinned.example:${port}/echo`, { ...loop, resolve });
    expect(res.text()).toBe('GET');
    expect(lookups).toBe(1);
    expect(main.seen.at(-1)!.headers.host).toBe(`pinned.example:${port}`);
    // The Host header is not the caller's to choose.
    await safeFetch(`${base}/echo`, { ...loop, headers: { Host: 'admin.internal', 'x-ok': '1' } });
    expect(main.seen.at(-1)!.headers.host).toBe(new URL(base).host);
    expect(main.seen.at(-1)!.headers['x-ok']).toBe('1');
  });

  it('refuses non-http schemes and credentials in the URL', async () => {
    for (const url of [
      'file:///etc/passwd',
      'ftp://example.com/',
      'gopher://example.com/',
      'data:,hi',
      'not a url',
    ]) {
      expect((await refused(url)).code, url).toBe('URL_NOT_ALLOWED');
    }
    expect((await refused('http://user:pw@example.com/')).code).toBe('URL_NOT_ALLOWED');
  });

  it('re-checks every redirect hop and refuses one that points inside', async () => {
    const toMetadata = `${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/')}`;
    const err = await refused(toMetadata, loop);
    expect(err.code).toBe('URL_NOT_ALLOWED');
    expect(err.message).toContain('metadata');
    const toName = `${base}/redirect?to=${encodeURIComponent('http://internal.example/')}`;
    const resolve = async (host: string) => [
      { address: host === 'internal.example' ? '192.168.0.10' : '127.0.0.1', family: 4 as const },
    ];
    expect((await refused(toName, { ...loop, resolve })).code).toBe('URL_NOT_ALLOWED');
  });

  it('follows up to maxRedirects redirects and refuses more', async () => {
    const res = await safeFetch(`${base}/loop?n=2`, loop);
    expect(res.status).toBe(200);
    expect(res.url).toBe(`${base}/ok`);
    expect(res.redirects).toHaveLength(3);
    const err = await refused(`${base}/loop?n=10`, loop);
    expect(err.code).toBe('TOO_MANY_REDIRECTS');
    expect((await refused(`${base}/loop?n=1`, { ...loop, maxRedirects: 1 })).code).toBe('TOO_MANY_REDIRECTS');
    const raw = await safeFetch(`${base}/loop?n=1`, { ...loop, maxRedirects: 0 });
    expect(raw.status).toBe(302);
  });

  it('turns POST into GET on 303 and keeps it on 307; drops credentials across origins', async () => {
    const post = (status: number, to: string) =>
      safeFetch(`${base}/redirect?status=${status}&to=${encodeURIComponent(to)}`, {
        ...loop,
        method: 'POST',
        body: 'payload',
        headers: { authorization: 'Bearer secret', 'content-type': 'text/plain' },
      });
    expect((await post(303, '/echo')).text()).toBe('GET');
    expect((await post(307, '/echo')).text()).toBe('POST');
    expect(main.seen.at(-1)!.body).toBe('payload');
    expect(main.seen.at(-1)!.headers.authorization).toBe('Bearer secret');
    expect((await post(307, `${otherBase}/`)).text()).toBe('other');
    expect(other.seen.at(-1)!.headers.authorization).toBeUndefined();
    expect(other.seen.at(-1)!.body).toBe('payload');
  });

  it('gives up at the deadline on a server that never answers', async () => {
    const started = Date.now();
    const err = await refused(`${base}/hang`, { ...loop, timeoutMs: 300 });
    expect(err.code).toBe('FETCH_TIMEOUT');
    expect(err.status).toBe(504);
    const slow = await refused(`${base}/slow-body`, { ...loop, timeoutMs: 300 });
    expect(slow.code).toBe('FETCH_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('refuses a response larger than maxBytes, declared or streamed', async () => {
    expect((await refused(`${base}/big`, { ...loop, maxBytes: 1000 })).code).toBe('RESPONSE_TOO_LARGE');
    expect((await refused(`${base}/big-chunked`, { ...loop, maxBytes: 1000 })).code).toBe(
      'RESPONSE_TOO_LARGE',
    );
    expect((await safeFetch(`${base}/big-chunked`, { ...loop, maxBytes: 5000 })).body.length).toBe(5000);
  });

  it('reports an unreachable server as FETCH_FAILED and returns upstream errors as responses', async () => {
    const closed = startServer(() => {});
    const url = await closed.listen();
    await closed.close();
    const err = await refused(`${url}/`, loop);
    expect(err.code).toBe('FETCH_FAILED');
    expect(err.status).toBe(502);
    const missing = await safeFetch(`${base}/missing`, loop);
    expect(missing.status).toBe(404);
    expect(missing.ok).toBe(false);
  });

  it('reuses one connection with keepAlive, still checks every request, and opens one per call without', async () => {
    const counted = startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hi');
    });
    let sockets = 0;
    counted.server.on('connection', () => sockets++);
    const url = await counted.listen();
    try {
      for (let i = 0; i < 3; i++)
        expect((await safeFetch(`${url}/`, { ...loop, keepAlive: true })).text()).toBe('hi');
      expect(sockets).toBe(1);
      // The pooled connection does not bypass the guard: without OUTBOUND_ALLOW the same URL is refused.
      expect((await refused(`${url}/`, { keepAlive: true })).code).toBe('URL_NOT_ALLOWED');
      // The server dropping an idle pooled connection: the next call opens a fresh one and succeeds.
      counted.server.closeIdleConnections();
      await new Promise((ok) => setTimeout(ok, 50));
      expect((await safeFetch(`${url}/`, { ...loop, keepAlive: true })).status).toBe(200);
      const before = sockets;
      await safeFetch(`${url}/`, loop);
      await safeFetch(`${url}/`, loop);
      expect(sockets - before).toBe(2);
    } finally {
      await counted.close();
    }
  });
});
