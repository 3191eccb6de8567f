import { describe, expect, it } from 'vitest';
import { blockedReason } from './ip-policy.ts';

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

  it('lets loopback (and only loopback) through when asked', () => {
    expect(blockedReason('127.0.0.1', { allowLoopback: true })).toBeNull();
    expect(blockedReason('::1', { allowLoopback: true })).toBeNull();
    expect(blockedReason('::ffff:127.0.0.1', { allowLoopback: true })).toBeNull();
    expect(blockedReason('10.0.0.1', { allowLoopback: true })).toBe('private');
    expect(blockedReason('169.254.169.254', { allowLoopback: true })).toBe('cloud metadata');
  });
});
