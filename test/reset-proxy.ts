import net from 'node:net';

// A TCP proxy in front of Pier that can drop every connection on command: open ones are reset (ECONNRESET on
// the client) and new ones are reset on arrival for a while — a flaky network or a restarting listener.

export type ResetProxy = { url: string; drop(ms: number): void; close(): Promise<void>; drops: number };

export async function resetProxy(targetPort: number): Promise<ResetProxy> {
  let until = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    client.on('error', () => {});
    if (Date.now() < until) {
      proxy.drops++;
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
    open.add(client);
    client.on('close', () => open.delete(client));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const proxy: ResetProxy = {
    url: `http://127.0.0.1:${port}`,
    drops: 0,
    drop(ms) {
      until = Date.now() + ms;
      for (const s of open) {
        proxy.drops++;
        s.resetAndDestroy();
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
  return proxy;
}
