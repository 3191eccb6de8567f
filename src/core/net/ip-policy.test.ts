import { describe, expect, it } from 'vitest';
import { blockedReason } from './ip-policy.ts';
import { parseOutboundAllow } from './outbound-allow.ts';

const allowOf = (raw: string) => {
  const { allow, problems } = parseOutboundAllow(raw);
  expect(problems).toEqual([]);
  return allow;
};

describe('ip policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.10.10', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    // IPv6 forms that carry an IPv4 address are judged by that address.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['::ffff:0:a00:1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['::7f00:1', 'reserved'],
    ['2001:0:4136:e378::1', 'reserved'], // Teredo hides its IPv4 address
    ['2001:db8::1', 'reserved'],
    ['not-an-ip', 'not an IP address'],
  ])('%s is refused as %s', (ip, reason) => {
    expect(blockedReason(ip)).toBe(reason);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is allowed', (ip) => {
    expect(blockedReason(ip)).toBeNull();
  });

  it('opens the ranges OUTBOUND_ALLOW lists, and only those', () => {
    const allow = allowOf('127.0.0.1/32, 10.1.0.0/16, fd12:3456::/32');
    expect(blockedReason('127.0.0.1', { allow })).toBeNull();
    expect(blockedReason('::ffff:127.0.0.1', { allow })).toBeNull();
    expect(blockedReason('10.1.200.3', { allow })).toBeNull();
    expect(blockedReason('fd12:3456::9', { allow })).toBeNull();
    // Not listed: still refused, with the reason of the address.
    expect(blockedReason('127.0.0.2', { allow })).toBe('loopback');
    expect(blockedReason('::1', { allow })).toBe('loopback');
    expect(blockedReason('10.2.0.1', { allow })).toBe('private');
    expect(blockedReason('192.168.1.1', { allow })).toBe('private');
    expect(blockedReason('fd99::1', { allow })).toBe('unique-local');
  });

  it('never opens the cloud metadata addresses, even inside a listed range or for a listed host', () => {
    const allow = allowOf('169.254.0.0/16, fd00::/8, 0.0.0.0/0');
    expect(blockedReason('169.254.10.10', { allow })).toBeNull();
    expect(blockedReason('169.254.169.254', { allow })).toBe('cloud metadata');
    expect(blockedReason('::ffff:169.254.169.254', { allow })).toBe('cloud metadata');
    expect(blockedReason('fd00:ec2::254', { allow })).toBe('cloud metadata');
    expect(blockedReason('fd00:ec2::254')).toBe('cloud metadata');
    expect(blockedReason('169.254.169.254', { allow, hostListed: true })).toBe('cloud metadata');
    expect(blockedReason('10.0.0.1', { hostListed: true })).toBeNull();
  });
});

describe('OUTBOUND_ALLOW parsing', () => {
  it('reads host names, wildcards, addresses and CIDRs of both families', () => {
    const allow = allowOf(
      ' Hooks.Corp.Example. , *.intranet.example, 192.168.0.7, [fd00::1]/128, 10.0.0.0/8 ',
    );
    expect(allow.hosts).toEqual(['hooks.corp.example']);
    expect(allow.suffixes).toEqual(['.intranet.example']);
    expect(allow.ranges.map(([ip, bits]) => `${ip.toString()}/${bits}`)).toEqual([
      '192.168.0.7/32',
      'fd00::1/128',
      '10.0.0.0/8',
    ]);
    expect(parseOutboundAllow('').allow).toEqual({ ranges: [], hosts: [], suffixes: [] });
  });

  it('refuses the metadata addresses and malformed entries, naming each', () => {
    const { problems } = parseOutboundAllow(
      '169.254.169.254, fd00:ec2::254/128, ::ffff:169.254.169.254, 10.0.0.0/33, 300.1.1.1, bad_host!, 1.2.3.4/8/9',
    );
    expect(problems).toHaveLength(7);
    expect(problems[0]).toContain('cloud metadata');
    expect(problems[1]).toContain('cloud metadata');
    expect(problems[2]).toContain('cloud metadata');
  });
});
