import { describe, expect, it } from 'vitest';
import { ChunkedBody, parseRequestHead, parseResponseHead } from './http-framing.ts';

const head = (...lines: string[]) => lines.join('\r\n');

describe('request heads on the spliced path', () => {
  it('keeps the request, drops proxy credentials and sets X-Forwarded-* from the peer', () => {
    const r = parseRequestHead(
      head(
        'POST /x?y=1 HTTP/1.1',
        'Host: a.apps.test',
        'X-Forwarded-For: 1.2.3.4',
        'X-Forwarded-Host: evil.example',
        'X-Forwarded-Proto: https',
        'Proxy-Authorization: Basic eA==',
        'Content-Length: 5',
      ),
      '10.0.0.9',
      'http',
    );
    expect(r).toMatchObject({ method: 'POST', host: 'a.apps.test', body: 5 });
    expect(r!.forward).toBe(
      'POST /x?y=1 HTTP/1.1\r\nHost: a.apps.test\r\nContent-Length: 5\r\n' +
        'x-forwarded-for: 1.2.3.4, 10.0.0.9\r\nx-forwarded-proto: http\r\nx-forwarded-host: a.apps.test\r\n\r\n',
    );
    expect(
      parseRequestHead(head('GET / HTTP/1.1', 'host: a', 'transfer-encoding: Chunked'), '', 'http')?.body,
    ).toBe('chunked');
    expect(parseRequestHead(head('GET / HTTP/1.0', 'host: a'), '', 'https')?.body).toBe('none');
  });

  it('leaves to the HTTP server what it cannot frame with certainty', () => {
    const bad = [
      head('GET / HTTP/1.1'), // no Host
      head('GET / HTTP/1.1', 'Host: a', 'Host: b'),
      head('GET / HTTP/1.1', 'Host: a', 'Content-Length: 1', 'Content-Length: 1'),
      head('GET / HTTP/1.1', 'Host: a', 'Content-Length: 1', 'Transfer-Encoding: chunked'),
      head('GET / HTTP/1.1', 'Host: a', 'Transfer-Encoding: gzip, chunked'),
      head('GET / HTTP/1.1', 'Host: a', 'Content-Length: -1'),
      head('GET / HTTP/1.1', 'Host: a', 'Content-Length : 1'),
      head('GET / HTTP/1.1', 'Host: a', ' folded: line'),
      head('GET / HTTP/1.1', 'Host: a\nContent-Length: 5'),
      head('GET / HTTP/1.1', 'Host: a', 'Upgrade: websocket', 'Connection: Upgrade'),
      head('CONNECT a:443 HTTP/1.1', 'Host: a'),
      head('GET / HTTP/2.0', 'Host: a'),
      head('GET /'),
    ];
    for (const h of bad) expect(parseRequestHead(h, '', 'http'), h).toBeNull();
  });
});

describe('response heads on the spliced path', () => {
  it('frames by method, status, length and chunking', () => {
    expect(parseResponseHead(head('HTTP/1.1 200 OK', 'Content-Length: 12'), 'GET')).toEqual({
      status: 200,
      body: 12,
      close: false,
    });
    expect(parseResponseHead(head('HTTP/1.1 200 OK', 'Content-Length: 12'), 'HEAD')?.body).toBe('none');
    expect(parseResponseHead(head('HTTP/1.1 304 Not Modified'), 'GET')?.body).toBe('none');
    expect(parseResponseHead(head('HTTP/1.1 100 Continue'), 'POST')).toMatchObject({
      status: 100,
      body: 'none',
    });
    expect(parseResponseHead(head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked'), 'GET')?.body).toBe(
      'chunked',
    );
    expect(parseResponseHead(head('HTTP/1.1 200 OK'), 'GET')).toEqual({
      status: 200,
      body: 'close',
      close: true,
    });
    expect(
      parseResponseHead(head('HTTP/1.1 200 OK', 'Connection: close', 'Content-Length: 0'), 'GET'),
    ).toEqual({
      status: 200,
      body: 'none',
      close: true,
    });
    expect(parseResponseHead(head('HTTP/1.0 200 OK', 'Content-Length: 1'), 'GET')?.close).toBe(true);
    expect(
      parseResponseHead(head('HTTP/1.0 200 OK', 'Connection: keep-alive', 'Content-Length: 1'), 'GET')?.close,
    ).toBe(false);
  });

  it('refuses ambiguous framing', () => {
    expect(
      parseResponseHead(head('HTTP/1.1 200 OK', 'Content-Length: 1', 'Transfer-Encoding: chunked'), 'GET'),
    ).toBeNull();
    expect(
      parseResponseHead(head('HTTP/1.1 200 OK', 'Content-Length: 1', 'Content-Length: 2'), 'GET'),
    ).toBeNull();
    expect(parseResponseHead(head('HTTP/1.1 200 OK', 'Transfer-Encoding: gzip'), 'GET')).toBeNull();
    expect(parseResponseHead('HTTP/1.1 200 OK\nContent-Length: 1', 'GET')).toBeNull();
  });
});

describe('chunked bodies', () => {
  it('finds the end across any split, trailers included', () => {
    const body = Buffer.from(
      '5;ext=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: 1\r\n\r\nGET / HTTP/1.1',
    );
    const end = body.indexOf('GET');
    for (let split = 0; split <= end; split++) {
      const c = new ChunkedBody();
      const first = c.scan(body.subarray(0, split), 0);
      expect(first).toBe(split);
      expect(c.done).toBe(split === end);
      if (c.done) continue;
      const rest = body.subarray(split);
      expect(c.scan(rest, 0)).toBe(end - split);
      expect(c.done).toBe(true);
    }
  });

  it('throws on bad framing', () => {
    for (const bad of ['zz\r\n', '5\r\nhelloX\r\n', '5\nhello', '0\r\nbad trailer\r\n\r\n']) {
      expect(() => new ChunkedBody().scan(Buffer.from(bad), 0), bad).toThrow();
    }
  });
});
