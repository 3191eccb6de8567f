import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

// A real SMTP server on 127.0.0.1 for tests and benchmarks. Recipients steer it by their local part:
//   bounce…@   → 550 on RCPT TO (hard bounce)
//   tempN…@    → 451 on RCPT TO for the first N attempts (e.g. temp2-x@ fails twice, then accepts)
//   reject…@   → 554 on DATA (permanent failure of the message)

export type Received = { from: string; to: string[]; raw: string; at: number };

export type SmtpSink = {
  url: string;
  port: number;
  received: Received[];
  /** Waits until `n` messages arrived (or the timeout passes). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
};

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** `replyDelayMs`: the sink answers each message's DATA this much later (a slow next hop). */
export async function startSmtpSink(
  opts: { keepRaw?: boolean; replyDelayMs?: number } = {},
): Promise<SmtpSink> {
  const received: Received[] = [];
  const tries = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    maxClients: 200,
    onRcptTo(address, _session, cb) {
      const a = address.address.toLowerCase();
      if (a.startsWith('bounce')) return cb(smtpError(550, '5.1.1 User unknown'));
      const temp = /^temp(\d+)/.exec(a);
      if (temp) {
        const n = (tries.get(a) ?? 0) + 1;
        tries.set(a, n);
        if (n <= Number(temp[1])) return cb(smtpError(451, '4.3.0 Try again later'));
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        if (to.some((a) => a.startsWith('reject'))) return cb(smtpError(554, '5.7.1 Message refused'));
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        received.push({
          from,
          to,
          raw: opts.keepRaw === false ? '' : Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        if (opts.replyDelayMs) setTimeout(() => cb(), opts.replyDelayMs);
        else cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    waitFor: async (n, timeoutMs = 10_000) => {
      const until = Date.now() + timeoutMs;
      while (received.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
