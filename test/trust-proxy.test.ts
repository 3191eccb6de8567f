import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { type TestApp, testApp } from './harness.ts';

// Pier behind a load balancer: a little reverse proxy on 127.0.0.1 that, like nginx's
// `proxy_add_x_forwarded_for`, appends the address it saw to X-Forwarded-For. Two clients reach it from two
// loopback addresses (127.0.0.2 and 127.0.0.3). With TRUST_PROXY the per-IP sign-in limit counts each client
// on its own; without it, the proxy is the one client everyone shares.

let proxy: http.Server;
let proxyPort: number;
let target = '';

function post(localAddress: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port: proxyPort,
        localAddress,
        method: 'POST',
        path,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(data),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

beforeAll(async () => {
  proxy = http.createServer((req, res) => {
    const seen = req.socket.remoteAddress!.replace(/^::ffff:/, '');
    const prior = req.headers['x-forwarded-for'];
    const upstream = http.request(
      `${target}${req.url}`,
      {
        method: req.method,
        headers: { ...req.headers, 'x-forwarded-for': prior ? `${prior}, ${seen}` : seen },
      },
      (up) => {
        res.writeHead(up.statusCode!, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502).end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyPort = (proxy.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => proxy.close(r));
});

/** Fails sign-in from `client` until the per-IP limit answers 429; returns how many attempts it took. */
async function exhaustSignIn(client: string): Promise<number> {
  for (let i = 1; i <= 12; i++) {
    const r = await post(client, '/api/dashboard/sign-in', {
      email: `nobody-${client}-${i}@example.com`,
      password: 'wrong password',
    });
    if (r.status === 429) return i;
    expect(r.status, r.body).toBe(401);
  }
  throw new Error('never limited');
}

async function signInStatus(client: string, headers: Record<string, string> = {}) {
  const r = await post(
    client,
    '/api/dashboard/sign-in',
    { email: `someone-else-${Date.now()}@example.com`, password: 'wrong password' },
    headers,
  );
  return r.status;
}

describe('TRUST_PROXY', () => {
  let t: TestApp;
  afterAll(async () => {
    await t?.close();
  });

  it('with the proxy trusted, one client using up the sign-in limit does not lock out another', async () => {
    t = await testApp({ listen: true, env: { TRUST_PROXY: '1' } });
    target = t.url;
    expect(await exhaustSignIn('127.0.0.2')).toBe(11);
    expect(await signInStatus('127.0.0.3')).toBe(401);
    // A client cannot dodge its limit with an X-Forwarded-For of its own: the proxy appends what it saw and
    // only that last hop is believed.
    expect(await signInStatus('127.0.0.2', { 'x-forwarded-for': '203.0.113.9' })).toBe(429);
    await t.close();
  });

  it('trusts proxies named by address or CIDR, and nobody else', async () => {
    t = await testApp({ listen: true, env: { TRUST_PROXY: '127.0.0.1/32, ::1' } });
    target = t.url;
    expect(await exhaustSignIn('127.0.0.4')).toBe(11);
    expect(await signInStatus('127.0.0.5')).toBe(401);
    await t.close();
  });

  it('off (the default): the proxy is the client, so its clients share one limit', async () => {
    t = await testApp({ listen: true });
    target = t.url;
    expect(await exhaustSignIn('127.0.0.6')).toBe(11);
    expect(await signInStatus('127.0.0.7')).toBe(429);
  });

  it('refuses a malformed TRUST_PROXY at start-up', () => {
    for (const bad of ['yes', '0', '11', '10.0.0.0/33', '127.0.0.1, example.com'])
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(ConfigError);
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,192.168.1.1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '192.168.1.1',
    ]);
  });
});
