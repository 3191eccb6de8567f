import net from 'node:net';

// A raw HTTP/1.1 keep-alive client for the router tests (hand-off and the spliced proxy path), which must
// control exactly which requests share one connection.

export type RawResponse = { status: number; head: string; body: string };

/** A raw keep-alive connection to Pier that reads responses one by one (content-length framed). */
export function rawClient(port: number) {
  const sock = net.connect(port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  let closed = false;
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  sock.on('data', (c) => {
    buf = Buffer.concat([buf, c]);
    wake();
  });
  sock.on('close', () => {
    closed = true;
    wake();
  });
  sock.on('error', () => {});
  const next = async (): Promise<RawResponse | null> => {
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = buf.subarray(0, end).toString('latin1');
        const len = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length >= end + 4 + len) {
          const body = buf.subarray(end + 4, end + 4 + len).toString();
          buf = buf.subarray(end + 4 + len);
          return { status: Number(head.split(' ')[1]), head, body };
        }
      }
      if (closed) return null;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return {
    sock,
    ready: new Promise<void>((r) => sock.once('connect', () => r())),
    send: (host: string, pathname = '/', extra = '') =>
      sock.write(`GET ${pathname} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`),
    next,
    closed: () => (closed ? Promise.resolve() : new Promise<void>((r) => sock.once('close', () => r()))),
  };
}
