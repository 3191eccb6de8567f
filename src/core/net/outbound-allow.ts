import net from 'node:net';
import ipaddr from 'ipaddr.js';

// OUTBOUND_ALLOW: the operator's list of private destinations Pier may reach anyway (an intranet webhook
// receiver, a gateway in front of a provider, the local fakes of the test suite). Entries are host names
// (`hooks.corp.example`, or `*.corp.example` for its subdomains) and IPv4/IPv6 addresses or CIDRs
// (`10.1.0.0/16`, `127.0.0.1/32`, `fd12::/64`). Empty by default: nothing private is reachable.
//
// The cloud metadata addresses are never reachable. Listing one of them exactly (169.254.169.254,
// fd00:ec2::254, alone or as /32 / /128) is a configuration error, because the operator asked for something
// Pier will not do; a wider range that happens to contain one (169.254.0.0/16) is accepted, and the metadata
// address inside it stays blocked by ip-policy.ts all the same.

type Range = readonly [ipaddr.IPv4 | ipaddr.IPv6, number];

export type OutboundAllow = {
  readonly ranges: readonly Range[];
  /** Exact host names, lower-case, without a trailing dot. */
  readonly hosts: readonly string[];
  /** `*.corp.example` entries, kept as `.corp.example`. */
  readonly suffixes: readonly string[];
};

export const NO_OUTBOUND_ALLOW: OutboundAllow = Object.freeze({ ranges: [], hosts: [], suffixes: [] });

export const METADATA_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254'];

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Parses the comma-separated list; every bad entry is reported (the config lists them all at once). */
export function parseOutboundAllow(raw: string): { allow: OutboundAllow; problems: string[] } {
  const ranges: Range[] = [];
  const hosts: string[] = [];
  const suffixes: string[] = [];
  const problems: string[] = [];
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const range = parseRange(entry);
    if (range === 'invalid') {
      problems.push(`'${entry}' is not a valid IP address or CIDR`);
    } else if (range) {
      if (isExactlyMetadata(range)) {
        problems.push(`'${entry}' is a cloud metadata address, which Pier never fetches`);
      } else {
        ranges.push(range);
      }
    } else {
      const name = entry.toLowerCase().replace(/\.$/, '');
      const wildcard = name.startsWith('*.');
      const bare = wildcard ? name.slice(2) : name;
      if (!bare.split('.').every((l) => HOST_LABEL.test(l))) {
        problems.push(`'${entry}' is neither a host name nor an IP address or CIDR`);
      } else if (wildcard) {
        suffixes.push(`.${bare}`);
      } else {
        hosts.push(bare);
      }
    }
  }
  return { allow: { ranges, hosts, suffixes }, problems };
}

/** A range for an address or CIDR entry, null for something that looks like a host name. */
function parseRange(entry: string): Range | 'invalid' | null {
  const [addr, prefix, ...rest] = entry.replace(/^\[|\](?=\/|$)/g, '').split('/');
  if (!net.isIP(addr!)) {
    // Digits and dots only (or a colon) mean an address was meant, not a name.
    return /^[\d.]+$/.test(addr!) || addr!.includes(':') || prefix !== undefined ? 'invalid' : null;
  }
  const ip = ipaddr.parse(addr!);
  const max = ip.kind() === 'ipv4' ? 32 : 128;
  if (prefix === undefined) return [ip, max];
  if (rest.length || !/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return 'invalid';
  return [ip, Number(prefix)];
}

function isExactlyMetadata([ip, bits]: Range): boolean {
  const v4 = ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress();
  const addr = v4 ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
  const full = bits === (addr.kind() === 'ipv4' ? 32 : 128) || (v4 && bits === 128);
  return (
    full && METADATA_ADDRESSES.some((m) => ipaddr.parse(m).toNormalizedString() === addr.toNormalizedString())
  );
}

/** Whether a host name (not a literal address) is listed by name. */
export function hostListed(host: string, allow: OutboundAllow): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allow.hosts.includes(name) || allow.suffixes.some((s) => name.endsWith(s));
}

/** Whether an address lies in a listed range; `embedded` is the IPv4 address an IPv6 form carries. */
export function inAllowedRange(
  addr: ipaddr.IPv4 | ipaddr.IPv6,
  allow: OutboundAllow,
  embedded: ipaddr.IPv4 | null,
): boolean {
  for (const [base, bits] of allow.ranges) {
    if (base.kind() === addr.kind() && addr.match(base as never, bits)) return true;
    if (embedded && base.kind() === 'ipv4' && embedded.match(base as ipaddr.IPv4, bits)) return true;
  }
  return false;
}
