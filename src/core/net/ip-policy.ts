import ipaddr from 'ipaddr.js';
import { inAllowedRange, type OutboundAllow } from './outbound-allow.ts';

// Which IP addresses Pier may connect to on behalf of a user (webhooks, webdata, workflow http steps,
// integrations). Deny by default: only globally routable unicast addresses pass. IPv6 forms that embed an
// IPv4 address (IPv4-mapped, IPv4-translated, NAT64, 6to4) are judged by the address they carry, so
// `::ffff:127.0.0.1` is as loopback as `127.0.0.1`. The operator's OUTBOUND_ALLOW (outbound-allow.ts) opens
// listed ranges, and every address of a listed host name; the cloud metadata addresses stay closed whatever
// it says.

export type BlockReason =
  | 'loopback'
  | 'private'
  | 'carrier-grade NAT'
  | 'link-local'
  | 'cloud metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'unique-local'
  | 'reserved'
  | 'not an IP address';

export type IpPolicy = {
  allow?: OutboundAllow;
  /** The host name being fetched is listed in OUTBOUND_ALLOW by name, so all its addresses pass. */
  hostListed?: boolean;
};

const AWS_V6_METADATA = ipaddr.parse('fd00:ec2::254').toNormalizedString();

const V4_REASONS: Record<string, BlockReason> = {
  loopback: 'loopback',
  private: 'private',
  carrierGradeNat: 'carrier-grade NAT',
  linkLocal: 'link-local',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
};

const V6_REASONS: Record<string, BlockReason> = {
  loopback: 'loopback',
  linkLocal: 'link-local',
  unspecified: 'unspecified',
  multicast: 'multicast',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'unique-local',
};

/** Why the address must not be contacted, or null when it is a public unicast address. */
export function blockedReason(ip: string, policy: IpPolicy = {}): BlockReason | null {
  if (!ipaddr.isValid(ip)) return 'not an IP address';
  const addr = ipaddr.parse(ip);
  const reason = classify(addr);
  if (reason === null || reason === 'cloud metadata') return reason;
  if (policy.hostListed) return null;
  if (policy.allow && inAllowedRange(addr, policy.allow, embeddedIn(addr))) return null;
  return reason;
}

function embeddedIn(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | null {
  return addr.kind() === 'ipv6' ? embeddedV4(addr as ipaddr.IPv6) : null;
}

function classify(addr: ipaddr.IPv4 | ipaddr.IPv6): BlockReason | null {
  if (addr.kind() === 'ipv4') return classifyV4(addr as ipaddr.IPv4);
  const v6 = addr as ipaddr.IPv6;
  // AWS's IPv6 instance metadata endpoint (Nitro), inside the unique-local range.
  if (v6.toNormalizedString() === AWS_V6_METADATA) return 'cloud metadata';
  const embedded = embeddedV4(v6);
  if (embedded) return classifyV4(embedded);
  const range = v6.range();
  if (range === 'unicast') {
    // Only 2000::/3 is global unicast; the rest of the unassigned space (and ::/96, the deprecated
    // IPv4-compatible form that some stacks still route to IPv4) is refused.
    const first = v6.parts[0]!;
    return first >= 0x2000 && first <= 0x3fff ? null : 'reserved';
  }
  return V6_REASONS[range] ?? 'reserved';
}

function classifyV4(addr: ipaddr.IPv4): BlockReason | null {
  const [a, b, c, d] = addr.octets;
  if (a === 169 && b === 254 && c === 169 && d === 254) return 'cloud metadata';
  const range = addr.range();
  if (range === 'unicast') return null;
  return V4_REASONS[range] ?? 'reserved';
}

/** The IPv4 address an IPv6 address stands for (mapped, translated, NAT64 well-known prefix, 6to4). */
function embeddedV4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = v6.parts;
  const fromParts = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (v6.range()) {
    case 'ipv4Mapped':
      return v6.toIPv4Address();
    case 'rfc6145':
      return fromParts(p[6]!, p[7]!);
    case 'rfc6052':
      // 64:ff9b::/96 carries the IPv4 address in its last 32 bits; 64:ff9b:1::/48 is local-use NAT64.
      return p[2] === 0 ? fromParts(p[6]!, p[7]!) : new ipaddr.IPv4([10, 0, 0, 0]);
    case '6to4':
      return fromParts(p[1]!, p[2]!);
    default:
      return null;
  }
}
