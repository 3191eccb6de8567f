import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostedPair, viaRouter } from '../hosting.ts';
import { rawClient } from '../raw-http-client.ts';

// Connection hand-off (docs/decisions/020-connection-handoff.md): a client's connection is handed to the app
// its first request names; a later request on it for another hostname answers 421 and never reaches the
// other app.

/** A dependency-free app that says who it is and which client port it sees. */
function appDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-handoff-app-'));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name, private: true, scripts: { start: 'node server.js' } }),
  );
  fs.writeFileSync(
    path.join(dir, 'server.js'),
    `require('node:http').createServer((req, res) => { let bytes = 0; req.on('data', (c) => { bytes += c.length; });` +
      ` req.on('end', () => res.end(JSON.stringify({ app: ${JSON.stringify(name)}, bytes, ` +
      "peerPort: req.socket.remotePort, ipc: typeof process.send === 'function', xfh: req.headers['x-forwarded-host'] }))); })" +
      ".listen(Number(process.env.PORT), '127.0.0.1');\n",
  );
  return dir;
}

const pair = hostedPair(appDir);

describe('connection hand-off', () => {
  const port = () => Number(new URL(pair.t.url).port);

  it('is on by default, and the app answers the client on its own connection', async () => {
    expect(pair.t.deps.config.appConnectionHandoff).toBe(true);
    const [a] = pair.apps;
    const c = rawClient(port());
    await c.ready;
    c.send(a!.host);
    const first = await c.next();
    expect(first?.status).toBe(200);
    const body = JSON.parse(first!.body);
    // The app's peer is the client's own socket, not a connection of Pier's router.
    expect(body).toMatchObject({ app: 'app-a', peerPort: c.sock.localPort, ipc: true, xfh: a!.host });
    c.send(a!.host);
    expect(JSON.parse((await c.next())!.body).peerPort).toBe(c.sock.localPort);
    c.sock.destroy();
  });

  it('streams a large body of the first request through the hand-off', async () => {
    const [a] = pair.apps;
    const c = rawClient(port());
    await c.ready;
    const body = Buffer.alloc(2 * 1024 * 1024, 1);
    c.sock.write(`POST /upload HTTP/1.1\r\nHost: ${a!.host}\r\nContent-Length: ${body.length}\r\n\r\n`);
    // The rest arrives after the router has read the head and handed the connection over.
    await new Promise((r) => setTimeout(r, 50));
    c.sock.write(body);
    const got = JSON.parse((await c.next())!.body);
    expect(got).toMatchObject({ app: 'app-a', bytes: body.length, peerPort: c.sock.localPort });
    c.sock.destroy();
  });

  it('answers 421 and closes when a handed-off connection asks for another hostname', async () => {
    const [a, b] = pair.apps;
    const c = rawClient(port());
    await c.ready;
    c.send(a!.host);
    expect(JSON.parse((await c.next())!.body).app).toBe('app-a');
    c.send(b!.host);
    const other = await c.next();
    expect(other?.status).toBe(421);
    expect(other?.body).not.toContain('app-b');
    await c.closed();
    expect(await c.next()).toBeNull();

    // Pipelined in one write: the second request is refused the same way.
    const p = rawClient(port());
    await p.ready;
    p.sock.write(`GET / HTTP/1.1\r\nHost: ${a!.host}\r\n\r\nGET / HTTP/1.1\r\nHost: ${b!.host}\r\n\r\n`);
    expect(JSON.parse((await p.next())!.body).app).toBe('app-a');
    const second = await p.next();
    expect(second?.status).toBe(421);
    expect(second?.body).not.toContain('app-b');
    await p.closed();

    // Pier's own hostname on a handed-off connection: 421 too, never Pier's routes.
    const q = rawClient(port());
    await q.ready;
    q.send(a!.host);
    await q.next();
    q.send(`127.0.0.1:${port()}`, '/healthz');
    expect((await q.next())?.status).toBe(421);
    await q.closed();

    // A new connection for the other app reaches it.
    expect(JSON.parse((await viaRouter(pair.t, b!.slug)).body).app).toBe('app-b');
  });

  it('keeps Pier and unknown hostnames on the router', async () => {
    const c = rawClient(port());
    await c.ready;
    c.send(`127.0.0.1:${port()}`, '/healthz');
    expect((await c.next())?.status).toBe(200);
    c.send('no-such-app.apps.test');
    expect((await c.next())?.status).toBe(404);
    // The router keeps this connection, so it may still serve an app by proxying.
    c.send(pair.apps[0]!.host);
    const proxied = JSON.parse((await c.next())!.body);
    expect(proxied.app).toBe('app-a');
    expect(proxied.peerPort).not.toBe(c.sock.localPort);
    c.sock.destroy();
  });
});
