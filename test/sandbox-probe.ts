import dns from 'node:dns';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';

// What the sandbox tests share: local servers for an app to try, the host's addresses, and the JavaScript the
// probing app runs inside the sandbox to try a connection.

export const listen = (host: string) =>
  new Promise<http.Server>((resolve) => {
    const s = http.createServer((_q, r) => r.end('pier'));
    s.listen(0, host, () => resolve(s));
  });

export const portOf = (s: http.Server) => (s.address() as net.AddressInfo).port;

/** The host's first outward address; for IPv6 a documentation address when it has none (any will do). */
export function outwardAddress(family: 'IPv4' | 'IPv6' = 'IPv4'): string {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? [])
      if (a.family === family && !a.internal && !a.address.startsWith('fe80:')) return a.address;
  if (family === 'IPv6') return '2001:db8::1';
  throw new Error('no outward IPv4 address');
}

/** A name the host's resolver knows; the app asks slirp's forwarder (10.0.2.3) and must get the same answer. */
export const DNS_NAME = 'registry.npmjs.org';

/** The host's own answer for DNS_NAME (sorted addresses), or its error code where the host has no DNS. */
export const hostDnsAnswer = (): Promise<string> =>
  dns.promises.resolve4(DNS_NAME).then(
    (a) => a.sort().join(),
    (e: NodeJS.ErrnoException) => e.code ?? 'error',
  );

/** Whether the host's answer can be compared with the app's (a host without a resolver has nothing to match). */
export const hostHasDns = (answer: string) => answer !== 'ECONNREFUSED' && answer !== 'ETIMEOUT';

/** In the probing app: `connectTo(opts)` resolves "ok connected", the error code, or "timeout" after 5 s. */
export const CONNECT_TO = `
const connectTo = (opts) => new Promise((resolve) => {
  const s = require('node:net').connect(opts);
  const done = (r) => { clearTimeout(timer); s.destroy(); resolve(r); };
  const timer = setTimeout(() => done('timeout'), 5000);
  s.on('connect', () => done('ok connected'));
  s.on('error', (e) => done(e.code || e.message));
});`;
