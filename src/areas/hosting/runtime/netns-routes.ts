import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import ipaddr from 'ipaddr.js';
import type { OutboundAllow } from '../../../core/net/outbound-allow.ts';

// The routes of an app's network namespace (decision 082). slirp4netns forwards whatever reaches tap0 and
// cannot filter destinations, so the filter is the namespace's own routing table: `unreachable` routes for
// the private, shared and link-local ranges and for each of the host's own addresses, so a connect() there
// fails at once with EHOSTUNREACH inside the app's kernel context, before a packet reaches slirp. Pier writes
// them from outside with nsenter + ip before the app starts (as root, or through the user namespace of its uid
// that owns the network namespace, decision 091); the app has no CAP_NET_ADMIN in that namespace (bwrap drops
// every capability and nests a user namespace of its own), so it cannot remove them.

/** slirp4netns's network inside every namespace: the app (.100), the gateway (.2), the DNS forwarder (.3). */
const SLIRP_NET = '10.0.2.0/24';
const SLIRP_GATEWAY = '10.0.2.2';
const SLIRP_GUEST = '10.0.2.100/24';
export const TAP = 'tap0';
export const MTU = 65520;

/**
 * Never reachable from an app: private (RFC 1918), shared/carrier-grade NAT (also Alibaba's metadata
 * 100.100.100.200), link-local (the cloud metadata address 169.254.169.254), IETF protocol assignments and
 * the benchmarking range some clouds use internally. Loopback is the app's own namespace already.
 */
export const BLOCKED_V4 = [
  '10.0.0.0/8',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
];
/** Closed even when OUTBOUND_ALLOW opens a range around it (as the SSRF guard does). */
const METADATA_V4 = '169.254.169.254/32';

const inSlirpNet = (ip: ipaddr.IPv4, bits: number) =>
  bits >= 24 && ip.match(ipaddr.IPv4.parseCIDR(SLIRP_NET));

/** The host's own IPv4 addresses on every interface but loopback (read at each start: DHCP may change them). */
export function hostAddresses(): string[] {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) out.add(a.address);
  return [...out];
}

/** OUTBOUND_ALLOW's IPv4 ranges as CIDRs (host names cannot be routes; the namespace has no IPv6). */
export function allowedCidrs(allow: OutboundAllow): string[] {
  const out: string[] = [];
  for (const [base, bits] of allow.ranges) {
    let ip = base;
    let b = bits;
    if (ip.kind() === 'ipv6') {
      const v6 = ip as ipaddr.IPv6;
      if (!v6.isIPv4MappedAddress() || bits < 96) continue;
      ip = v6.toIPv4Address();
      b = bits - 96;
    }
    const net = ipaddr.IPv4.networkAddressFromCIDR(`${ip.toString()}/${b}`);
    out.push(`${net.toString()}/${b}`);
  }
  return out;
}

/**
 * The `ip -batch` script that configures the namespace after slirp4netns attached tap0: the interface, its
 * address and default route (what slirp4netns's --configure did), then the closed ranges, the host's own
 * addresses, the operator's openings (more specific, or replacing a closed range of the same prefix) and
 * the metadata address last. `lo` is left alone: bwrap sets it up itself (decision 082, the RTM_NEWADDR race).
 */
export function routeScript(o: {
  hostAddresses: string[];
  allow: string[];
  /** Bring `lo` up too: the namespace was made outside bwrap (Pier not root, decision 091), so bwrap leaves it. */
  loopback?: boolean;
}): string {
  const allow = o.allow.map((c) => ipaddr.IPv4.parseCIDR(c));
  // A closed range inside a wider opening is not closed at all (0.0.0.0/0 opens everything, as for the SSRF
  // guard); the opening's own route would lose to the more specific closed one otherwise.
  const opened = (cidr: string) => {
    const [ip, bits] = ipaddr.IPv4.parseCIDR(cidr);
    return allow.some(([a, b]) => b < bits && ip.match(a, b));
  };
  const lines = [
    ...(o.loopback ? ['link set lo up'] : []),
    `link set ${TAP} up mtu ${MTU}`,
    `addr add ${SLIRP_GUEST} dev ${TAP}`,
    `route add default via ${SLIRP_GATEWAY} dev ${TAP}`,
    ...BLOCKED_V4.filter((r) => !opened(r)).map((r) => `route add unreachable ${r}`),
  ];
  const seen = new Set(BLOCKED_V4);
  for (const a of o.hostAddresses) {
    const cidr = `${a}/32`;
    // slirp answers 10.0.2.x itself (gateway, DNS): those never reach the host's interfaces.
    if (seen.has(cidr) || !ipaddr.IPv4.isValid(a) || inSlirpNet(ipaddr.IPv4.parse(a), 32) || opened(cidr))
      continue;
    seen.add(cidr);
    lines.push(`route add unreachable ${cidr}`);
  }
  for (const cidr of o.allow) {
    const [ip, bits] = ipaddr.IPv4.parseCIDR(cidr);
    // Opening slirp's own network would replace its connected route; it is reachable anyway.
    if (inSlirpNet(ip, bits) || cidr === METADATA_V4) continue;
    lines.push(`route replace ${cidr} via ${SLIRP_GATEWAY} dev ${TAP}`);
  }
  lines.push(`route replace unreachable ${METADATA_V4}`);
  return `${lines.join('\n')}\n`;
}

export const NSENTER = '/usr/bin/nsenter';
const IP_CANDIDATES = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'];

/** Where iproute2's `ip` is, or null (then the hosting role refuses to start as root). */
export function ipBinary(): string | null {
  return IP_CANDIDATES.find((p) => fs.existsSync(p)) ?? null;
}

/**
 * nsenter's arguments to enter the network namespace of `pid`. As root, Pier is root in the host's user
 * namespace, which owns every other, so the network namespace alone is enough. Not root (decision 091), `pid`
 * is bwrap's own process, in the user namespace of Pier's uid that owns the network namespace: entering it
 * gives the capabilities there (uid and gid stay Pier's: that namespace denies setgroups).
 */
export function enterArgs(pid: number, asRoot: boolean): string[] {
  return asRoot
    ? [`--net=/proc/${pid}/ns/net`]
    : [`--user=/proc/${pid}/ns/user`, `--net=/proc/${pid}/ns/net`, '--preserve-credentials'];
}

/**
 * Runs the script inside the network namespace of `pid` (entered with `enterArgs`).
 * Resolves null when done, else the reason.
 */
export function configureNamespace(pid: number, script: string, asRoot = true): Promise<string | null> {
  const ip = ipBinary();
  if (!ip) return Promise.resolve('iproute2 is not installed (apt-get install iproute2)');
  return new Promise((resolve) => {
    const p = spawn(NSENTER, [...enterArgs(pid, asRoot), '--', ip, '-batch', '-'], {
      stdio: ['pipe', 'ignore', 'pipe'],
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
    let err = '';
    p.stderr.setEncoding('utf8').on('data', (d: string) => {
      err = (err + d).slice(-500);
    });
    p.stdin.on('error', () => {});
    p.stdin.end(script);
    p.on('error', (e) => resolve(e.message));
    p.on('exit', (code) => resolve(code === 0 ? null : `ip exited ${code}: ${err.trim()}`));
  });
}
