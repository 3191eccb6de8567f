import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostedPair, viaRouter, waitFor } from '../hosting.ts';
import { rawClient } from '../raw-http-client.ts';

// The spliced proxy path (docs/decisions/081-spliced-proxy-path.md), as behind a TLS proxy (hand-off off): a
// client connection is piped to the app its requests name, with each request's Host checked by Pier, so one
// keep-alive connection carrying requests for two tenants reaches each one's own app and never the other's.

/** A dependency-free app that says who it is and what it was sent; /big streams 5 MiB, /crash exits. */
function appDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-splice-app-'));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name, private: true, scripts: { start: 'node server.js' } }),
  );
  fs.writeFileSync(
    path.join(dir, 'server.js'),
    `const name = ${JSON.stringify(name)};
require('node:http').createServer((req, res) => {
  if (req.url === '/crash') process.exit(1);
  if (req.url === '/big') {
    const chunk = Buffer.alloc(64 * 1024, 7);
    let n = 0;
    const go = () => { while (n < 80) { n++; if (!res.write(chunk)) return res.once('drain', go); } res.end(); };
    return go();
  }
  let bytes = 0;
  req.on('data', (c) => { bytes += c.length; });
  req.on('end', () => res.end(JSON.stringify({ app: name, bytes, peerPort: req.socket.remotePort,
    xfh: req.headers['x-forwarded-host'], xff: req.headers['x-forwarded-for'], xfp: req.headers['x-forwarded-proto'] })));
}).on('upgrade', (req, sock) => {
  sock.end('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\nhello from ' + name);
}).listen(Number(process.env.PORT), '127.0.0.1');
`,
  );
  return dir;
}

const pair = hostedPair(appDir, { APP_CONNECTION_HANDOFF: 'off' });

describe('the spliced proxy path', () => {
  const port = () => Number(new URL(pair.t.url).port);

  it('sends each request of one keep-alive connection to the app its Host names, with X-Forwarded-*', async () => {
    expect(pair.t.deps.config.appConnectionHandoff).toBe(false);
    const [a, b] = pair.apps;
    const c = rawClient(port());
    await c.ready;
    c.send(a!.host, '/', 'X-Forwarded-Host: evil.example\r\nX-Forwarded-For: 203.0.113.7\r\n');
    const first = JSON.parse((await c.next())!.body);
    expect(first).toMatchObject({ app: 'app-a', xfh: a!.host, xfp: 'http', xff: '203.0.113.7, 127.0.0.1' });
    // Pier's own connection to the app, not the client's.
    expect(first.peerPort).not.toBe(c.sock.localPort);
    for (const [host, app] of [
      [b!.host, 'app-b'],
      [b!.host, 'app-b'],
      [a!.host, 'app-a'],
    ] as const) {
      c.send(host);
      const r = await c.next();
      expect(r?.status).toBe(200);
      expect(JSON.parse(r!.body)).toMatchObject({ app, xfh: host });
    }
    // Pipelined in one write: each answered in order by its own app.
    c.sock.write(
      `GET / HTTP/1.1\r\nHost: ${a!.host}\r\n\r\nGET / HTTP/1.1\r\nHost: ${b!.host}\r\n\r\nGET / HTTP/1.1\r\nHost: ${a!.host}\r\n\r\n`,
    );
    expect(JSON.parse((await c.next())!.body).app).toBe('app-a');
    expect(JSON.parse((await c.next())!.body).app).toBe('app-b');
    expect(JSON.parse((await c.next())!.body).app).toBe('app-a');
    c.sock.destroy();
  });

  it("gives Pier's own hostnames, unknown apps and upgrades to Pier's server on the same connection", async () => {
    const [a] = pair.apps;
    const c = rawClient(port());
    await c.ready;
    c.send(a!.host);
    expect(JSON.parse((await c.next())!.body).app).toBe('app-a');
    c.send(`127.0.0.1:${port()}`, '/healthz');
    expect(await c.next()).toMatchObject({ status: 200, body: '{"ok":true}' });
    c.send('no-such-app.apps.test');
    expect((await c.next())?.status).toBe(404);
    // The server keeps the connection from then on, and still proxies the app.
    c.send(a!.host);
    expect(JSON.parse((await c.next())!.body).app).toBe('app-a');
    c.sock.destroy();

    const u = rawClient(port());
    await u.ready;
    u.sock.write(
      `GET /ws HTTP/1.1\r\nHost: ${a!.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    let got = '';
    u.sock.on('data', (d) => {
      got += d.toString('latin1');
    });
    await u.closed();
    expect(got).toMatch(/^HTTP\/1\.1 101 /);
    expect(got).toContain('hello from app-a');
  });

  it('streams large bodies both ways, chunked or not, to a slow reader', async () => {
    const [a] = pair.apps;
    const c = rawClient(port());
    await c.ready;
    const body = Buffer.alloc(2 * 1024 * 1024, 1);
    c.sock.write(`POST /upload HTTP/1.1\r\nHost: ${a!.host}\r\nContent-Length: ${body.length}\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 50));
    c.sock.write(body.subarray(0, 1000));
    await new Promise((r) => setTimeout(r, 50));
    c.sock.write(body.subarray(1000));
    expect(JSON.parse((await c.next())!.body)).toMatchObject({ app: 'app-a', bytes: body.length });
    // A chunked request body, then the next request right behind it.
    c.sock.write(
      `POST / HTTP/1.1\r\nHost: ${a!.host}\r\nTransfer-Encoding: chunked\r\n\r\n` + `4\r\nabcd\r\n`,
    );
    await new Promise((r) => setTimeout(r, 50));
    c.sock.write(`3\r\nefg\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: ${a!.host}\r\n\r\n`);
    expect(JSON.parse((await c.next())!.body)).toMatchObject({ app: 'app-a', bytes: 7 });
    expect(JSON.parse((await c.next())!.body)).toMatchObject({ app: 'app-a', bytes: 0 });
    c.sock.destroy();

    // A 5 MiB chunked response read slowly, then another request on the same connection.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const url = new URL(pair.t.url);
    const get = (pathname: string, slow: boolean) =>
      new Promise<{ bytes: number; body: string; port: number }>((resolve, reject) => {
        http
          .get(
            { host: url.hostname, port: url.port, path: pathname, agent, headers: { host: a!.host } },
            (res) => {
              let bytes = 0;
              const parts: Buffer[] = [];
              const localPort = res.socket.localPort ?? 0;
              res.on('data', (d: Buffer) => {
                bytes += d.length;
                if (parts.length < 4) parts.push(d);
                if (slow && bytes < 1024 * 1024) {
                  res.pause();
                  setTimeout(() => res.resume(), 5);
                }
              });
              res.on('end', () => resolve({ bytes, body: Buffer.concat(parts).toString(), port: localPort }));
              res.on('error', reject);
            },
          )
          .on('error', reject);
      });
    const big = await get('/big', true);
    expect(big.bytes).toBe(80 * 64 * 1024);
    const after = await get('/', false);
    expect(JSON.parse(after.body).app).toBe('app-a');
    expect(after.port).toBe(big.port);
    agent.destroy();
  });

  it('answers 502 when the app goes away mid-request; an idle connection outlives it (decision 128)', async () => {
    const [, b] = pair.apps;
    const idle = rawClient(port());
    await idle.ready;
    idle.send(b!.host);
    expect(JSON.parse((await idle.next())!.body).app).toBe('app-b');
    const c = rawClient(port());
    await c.ready;
    c.send(b!.host, '/crash');
    const r = await c.next();
    expect(r?.status).toBe(502);
    expect(r?.body).toContain('App unavailable');
    await c.closed();
    // The supervisor restarts it; a new connection reaches the new process.
    await waitFor(
      'the restarted app',
      async () => {
        const res = await viaRouter(pair.t, b!.slug).catch(() => null);
        return res?.status === 200 ? res : null;
      },
      30_000,
    );
    // The idle connection was not closed under its client (who may be sending at that moment): its next
    // request reaches the restarted process.
    idle.send(b!.host);
    expect(JSON.parse((await idle.next())!.body).app).toBe('app-b');
    idle.sock.destroy();
  });
});
