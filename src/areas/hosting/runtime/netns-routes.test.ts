import { describe, expect, it } from 'vitest';
import { parseOutboundAllow } from '../../../core/net/outbound-allow.ts';
import { allowedCidrs, BLOCKED_V4, routeScript } from './netns-routes.ts';

// The routes Pier writes into each app's network namespace (decision 082); sandbox.test.ts proves them from
// inside a real app.

describe('the routes of an app namespace', () => {
  it('configures tap0, closes the private ranges and the host addresses, reopens the allowed ones, metadata last', () => {
    const lines = routeScript({
      hostAddresses: ['192.0.2.2', '192.0.2.2', '10.0.2.15', '203.0.113.9'],
      allow: ['192.0.2.2/32', '10.20.0.0/16', '169.254.0.0/16', '10.0.2.0/24'],
    })
      .trim()
      .split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'link set tap0 up mtu 65520',
      'addr add 10.0.2.100/24 dev tap0',
      'route add default via 10.0.2.2 dev tap0',
    ]);
    for (const r of BLOCKED_V4) expect(lines).toContain(`route add unreachable ${r}`);
    // Each host address once; one inside slirp's own network is slirp's, not the host's.
    expect(lines.filter((l) => l === 'route add unreachable 192.0.2.2/32')).toHaveLength(1);
    expect(lines).toContain('route add unreachable 203.0.113.9/32');
    expect(lines.join()).not.toContain('10.0.2.15');
    // Openings come after the closures (replace wins over a closed range of the same prefix); slirp's own
    // network is never rerouted; the metadata address is closed last whatever was opened.
    expect(lines.indexOf('route replace 192.0.2.2/32 via 10.0.2.2 dev tap0')).toBeGreaterThan(
      lines.indexOf('route add unreachable 192.0.2.2/32'),
    );
    expect(lines).toContain('route replace 10.20.0.0/16 via 10.0.2.2 dev tap0');
    expect(lines).toContain('route replace 169.254.0.0/16 via 10.0.2.2 dev tap0');
    expect(lines.join()).not.toContain('10.0.2.0/24 via');
    expect(lines.at(-1)).toBe('route replace unreachable 169.254.169.254/32');
    // lo is bwrap's to set up (the RTM_NEWADDR race).
    expect(lines.join()).not.toMatch(/\blo\b/);
  });

  it('brings lo up first when the namespace was made outside bwrap (Pier not root, decision 091)', () => {
    const lines = routeScript({ hostAddresses: [], allow: [], loopback: true }).trim().split('\n');
    expect(lines[0]).toBe('link set lo up');
    expect(lines[1]).toBe('link set tap0 up mtu 65520');
  });

  it('leaves a closed range inside a wider opening open (0.0.0.0/0 opens all but the metadata address)', () => {
    const lines = routeScript({ hostAddresses: ['192.0.2.2'], allow: ['0.0.0.0/0'] })
      .trim()
      .split('\n');
    expect(lines.filter((l) => l.includes('unreachable'))).toEqual([
      'route replace unreachable 169.254.169.254/32',
    ]);
    const some = routeScript({ hostAddresses: ['172.20.0.5', '192.0.2.2'], allow: ['172.0.0.0/8'] });
    expect(some).not.toContain('unreachable 172.16.0.0/12');
    expect(some).not.toContain('unreachable 172.20.0.5/32');
    expect(some).toContain('route add unreachable 192.0.2.2/32');
    expect(some).toContain('route add unreachable 10.0.0.0/8');
  });

  it("takes OUTBOUND_ALLOW's IPv4 ranges as network CIDRs and leaves host names and IPv6 out", () => {
    const { allow, problems } = parseOutboundAllow(
      '10.1.2.3/16, 192.168.1.7, hooks.corp.example, *.lan.example, fd12::/64, ::ffff:172.16.0.0/108',
    );
    expect(problems).toEqual([]);
    expect(allowedCidrs(allow)).toEqual(['10.1.0.0/16', '192.168.1.7/32', '172.16.0.0/12']);
  });
});
