import dgram from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import dns2 from 'dns2';

// A real DNS server on 127.0.0.1 (UDP and TCP on one port) for tests: TXT records from a map the test
// edits; every other name answers NXDOMAIN. Point Pier at it with DNS_SERVERS=127.0.0.1:<port>.

export type DnsServer = {
  /** `host:port`, for DNS_SERVERS. */
  address: string;
  /** TXT values by name (lower case, no trailing dot). */
  txt: Map<string, string[]>;
  /** Asks this server, with the `dns.promises.resolve` signature (mailauth's custom resolver). */
  resolve(name: string, rr: string): Promise<string[] | string[][]>;
  close(): Promise<void>;
};

/** A TXT value as DNS carries it: character-strings of at most 255 octets. */
function chunks(value: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < value.length; i += 255) out.push(value.slice(i, i + 255));
  return out.length ? out : [''];
}

async function freePort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export async function startDnsServer(): Promise<DnsServer> {
  const txt = new Map<string, string[]>();
  // The port is free for UDP when picked, but TCP on the same number can be taken meanwhile (by another
  // suite's connection): then the listen fails with EADDRINUSE, and a fresh port is tried.
  for (let attempt = 1; ; attempt++) {
    const server = dnsServer(txt);
    const port = await freePort();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server
          .listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } })
          .then(() => {
            server.off('error', reject);
            resolve();
          }, reject);
      });
    } catch (err) {
      try {
        server.close();
      } catch {}
      if (attempt >= 5) throw err;
      continue;
    }
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    return {
      address: `127.0.0.1:${port}`,
      txt,
      resolve: (name, rr) => resolver.resolve(name, rr) as Promise<string[] | string[][]>,
      close: () => server.close(),
    };
  }
}

function dnsServer(txt: Map<string, string[]>) {
  const { Packet } = dns2;
  return dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const name = String(q?.name ?? '')
        .toLowerCase()
        .replace(/\.$/, '');
      const values = txt.get(name);
      if (!values) response.header.rcode = Packet.RCODE.NXDOMAIN;
      else if (q?.type === Packet.TYPE.TXT)
        for (const v of values)
          response.answers.push({
            name: q.name,
            type: Packet.TYPE.TXT,
            class: Packet.CLASS.IN,
            ttl: 60,
            data: chunks(v),
          } as never);
      send(response);
    },
  });
}
