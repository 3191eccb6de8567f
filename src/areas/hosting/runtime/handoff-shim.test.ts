import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appSlugFromHost } from './host-router.ts';

// The shim runs inside app processes; here its Host check and X-Forwarded-* are driven on a real server.
const shim = createRequire(import.meta.url)('./handoff-shim.cjs') as {
  appSlugFromHost(host: string | undefined, domain: string): string | null;
  hostMatches(host: string | undefined, slug: string, domain: string): boolean;
  instrument(server: http.Server): { draining: boolean };
  kPier: symbol;
};

describe('the shim Host check', () => {
  it('reads hostnames exactly as the router does', () => {
    const cases: [string | undefined, string][] = [
      ['shop.apps.test', 'apps.test'],
      ['SHOP.Apps.Test', 'apps.test'],
      ['shop.apps.test:8080', 'apps.test'],
      ['shop.localhost:8787', 'localhost:8787'],
      ['shop.localhost', 'localhost:8787'],
      ['shop.localhost:9999', 'localhost:8787'],
      ['a.b.apps.test', 'apps.test'],
      ['apps.test', 'apps.test'],
      ['evil.com', 'apps.test'],
      ['shop.apps.test.evil.com', 'apps.test'],
      ['', 'apps.test'],
      [undefined, 'apps.test'],
    ];
    for (const [host, domain] of cases)
      expect(shim.appSlugFromHost(host, domain), String(host)).toBe(appSlugFromHost(host, domain));
  });

  it('matches only the slug the connection was handed over for', () => {
    expect(shim.hostMatches('shop.apps.test', 'shop', 'apps.test')).toBe(true);
    expect(shim.hostMatches('Shop.apps.test:80', 'shop', 'apps.test')).toBe(true);
    expect(shim.hostMatches('other.apps.test', 'shop', 'apps.test')).toBe(false);
    expect(shim.hostMatches('127.0.0.1:8787', 'shop', 'apps.test')).toBe(false);
    expect(shim.hostMatches(undefined, 'shop', 'apps.test')).toBe(false);
  });
});

describe('requests on a handed-over connection', () => {
  let server: http.Server;
  let port = 0;
  const seen: http.IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      res.end(`app saw ${req.headers.host}`);
    });
    shim.instrument(server);
    // Stand-in for the hand-over: mark every connection as handed over for `shop`.
    server.prependListener('connection', (s: net.Socket) => {
      (s as unknown as Record<symbol, unknown>)[shim.kPier] = {
        slug: 'shop',
        domain: 'apps.test',
        proto: 'https',
      };
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  function exchange(raw: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => s.write(raw));
      let out = '';
      s.on('data', (c) => {
        out += c;
      });
      s.on('close', () => resolve(out));
      s.on('error', reject);
      setTimeout(() => s.end(), 500).unref();
    });
  }

  it('passes the app hostname with X-Forwarded-* and answers 421 for another, closing the connection', async () => {
    seen.length = 0;
    const out = await exchange(
      'GET / HTTP/1.1\r\nHost: shop.apps.test\r\nX-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Host: spoofed\r\n\r\n' +
        'GET / HTTP/1.1\r\nHost: other.apps.test\r\n\r\n' +
        'GET / HTTP/1.1\r\nHost: shop.apps.test\r\n\r\n',
    );
    const responses = out.split(/(?=HTTP\/1\.1 )/);
    expect(responses).toHaveLength(2);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200/);
    expect(responses[0]).toContain('app saw shop.apps.test');
    expect(responses[1]).toMatch(/^HTTP\/1\.1 421 Misdirected Request/);
    expect(responses[1]).toMatch(/connection: close/i);
    expect(responses[1]).not.toContain('app saw');
    // The app saw only the first request, with the forwarded headers set as the proxy path sets them.
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      'x-forwarded-for': '10.0.0.9, 127.0.0.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'shop.apps.test',
    });
  });

  it('refuses a WebSocket upgrade for another hostname with 421', async () => {
    let upgraded = false;
    server.once('upgrade', (_req, s: net.Socket) => {
      upgraded = true;
      s.destroy();
    });
    const out = await exchange(
      'GET /ws HTTP/1.1\r\nHost: other.apps.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    );
    expect(out).toMatch(/^HTTP\/1\.1 421/);
    expect(upgraded).toBe(false);
  });

  it('closes the connection after each response while draining', async () => {
    const state = shim.instrument(server);
    state.draining = true;
    const out = await exchange(
      'GET / HTTP/1.1\r\nHost: shop.apps.test\r\n\r\nGET / HTTP/1.1\r\nHost: shop.apps.test\r\n\r\n',
    );
    expect(out.match(/HTTP\/1\.1 200/g)).toHaveLength(1);
    expect(out).toMatch(/connection: close/i);
  });
});
