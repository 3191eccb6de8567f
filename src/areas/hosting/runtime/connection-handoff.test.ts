import { describe, expect, it } from 'vitest';
import { headHost } from './connection-handoff.ts';

describe('headHost: the Host a new connection is routed by', () => {
  it('finds the Host header in any case and position', () => {
    expect(headHost('GET / HTTP/1.1\r\nHost: shop.apps.test')).toBe('shop.apps.test');
    expect(headHost('GET /x HTTP/1.1\r\naccept: */*\r\nhost:  shop.apps.test:8787 \r\nx: y')).toBe(
      'shop.apps.test:8787',
    );
    expect(headHost('POST /upload HTTP/1.0\r\nHOST: a.b\r\ncontent-length: 3')).toBe('a.b');
  });

  it('declines heads the router should not route by', () => {
    expect(headHost('GET / HTTP/1.1\r\naccept: */*')).toBeNull(); // no Host
    expect(headHost('GET / HTTP/1.1\r\nHost: a.apps.test\r\nHost: b.apps.test')).toBeNull();
    expect(headHost('GET / HTTP/1.1\r\nHost: ')).toBeNull();
    expect(headHost('PRI * HTTP/2.0')).toBeNull();
    expect(headHost('garbage')).toBeNull();
    expect(headHost('GET / HTTP/1.1\r\nx-host: a.apps.test\r\nhosts: b')).toBeNull();
  });
});
