import { spawn } from 'node:child_process';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { headHost, sendSocket } from './connection-handoff.ts';

describe('headHost: the Host a new connection is routed by', () => {
  it('finds the Host header in any case and position', () => {
    expect(headHost('GET / HTTP/1.1\r\nHost: shop.apps.test')).toBe('shop.apps.test');
    expect(headHost('GET /x HTTP/1.1\r\naccept: */*\r\nhost:  shop.apps.test:8787 \r\nx: y')).toBe(
      'shop.apps.test:8787',
    );
    expect(headHost('POST /upload HTTP/1.0\r\nHOST: a.b\r\ncontent-length: 3')).toBe('a.b');
  });

  it('declines heads the router should not route by', () => {
    expect(headHost('GET / HTTP/1.1\r\naccept: */*')).toBeNull(); // no Host
    expect(headHost('GET / HTTP/1.1\r\nHost: a.apps.test\r\nHost: b.apps.test')).toBeNull();
    expect(headHost('GET / HTTP/1.1\r\nHost: ')).toBeNull();
    expect(headHost('PRI * HTTP/2.0')).toBeNull();
    expect(headHost('garbage')).toBeNull();
    expect(headHost('GET / HTTP/1.1\r\nx-host: a.apps.test\r\nhosts: b')).toBeNull();
  });
});

describe('sendSocket: handing a connection to an app process', () => {
  it('sends nothing while another hand-off awaits its acknowledgement, so closing the server does not hang', async () => {
    // The app keeps what it gets and tells when it got one; the second hand-off below is made before the first
    // is acknowledged, as happens under load when two connections for one app arrive close together.
    const child = spawn(
      process.execPath,
      [
        '-e',
        "const held = []; process.on('message', (m, s) => { if (s) { held.push(s); process.send('got'); } }); setInterval(() => {}, 1000);",
      ],
      { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
    );
    const accepted: net.Socket[] = [];
    const server = net.createServer((s) => accepted.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as net.AddressInfo;
    const clients = [net.connect(port, '127.0.0.1'), net.connect(port, '127.0.0.1')];
    for (const c of clients) c.on('error', () => {});
    while (accepted.length < 2) await new Promise((r) => setTimeout(r, 5));
    const got = new Promise((r) => child.once('message', r));

    expect(sendSocket(child, accepted[0]!, { n: 1 })).toBe(true);
    // The proxy path takes this one: it must stay Pier's, before and after the first one's acknowledgement.
    expect(sendSocket(child, accepted[1]!, { n: 2 })).toBe(false);
    await got;
    await new Promise((r) => setTimeout(r, 100));
    expect((accepted[1] as net.Socket & { _handle: unknown })._handle).toBeTruthy();

    // The app exits (a crash, a retire); then Pier shuts down.
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    accepted[1]!.destroy();
    for (const c of clients) c.destroy();
    const closed = new Promise<string>((r) => server.close(() => r('closed')));
    const timeout = new Promise<string>((r) => setTimeout(() => r('server.close() never called back'), 2000));
    expect(await Promise.race([closed, timeout])).toBe('closed');
  });
});
