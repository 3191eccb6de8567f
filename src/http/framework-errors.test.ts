import http from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import { seedV1Tenant } from '../../test/seed.ts';
import { clientErrorHandler, drainBody } from './framework-errors.ts';

// The framework's own refusals answer in the error envelope with a stable code, and a body too large is
// read to its end before the 413, so a client still sending gets the answer instead of a broken pipe.

let t: TestApp;
let live: string;

beforeAll(async () => {
  t = await testApp({ listen: true });
  live = (await seedV1Tenant(t.deps)).live;
});
afterAll(async () => {
  await t?.close();
});

const envelope = (code: string) => ({ error: { code, message: expect.any(String) } });

describe('framework errors in the envelope', () => {
  it('a path that does not decode is 400 BAD_URL', async () => {
    for (const url of ['/v1/webdata/extractions/%C3', '/api/fn/%zz', '/api/oauth/%E0%A4']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${live}` } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toEqual(envelope('BAD_URL'));
    }
  });

  it('a path parameter longer than any schema takes is 414 URI_TOO_LONG, for every method', async () => {
    const id = 'a'.repeat(5000);
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await t.v1(method, `/webdata/extractions/${id}`, live);
      expect(res.statusCode, method).toBe(414);
      expect(res.json()).toEqual(envelope('URI_TOO_LONG'));
    }
    // Up to the schemas' 200 characters the route answers.
    const ok = await t.v1('GET', `/webdata/extractions/${'a'.repeat(200)}`, live);
    expect(ok.json()).toEqual(envelope('EXTRACTION_NOT_FOUND'));
  });

  it('another media type is 415, bad JSON 400, an unknown route 404, all in the envelope', async () => {
    const post = (url: string, type: string, payload: string) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${live}`, 'content-type': type },
        payload,
      });
    const media = await post('/v1/webdata/extractions', 'application/xml', '<a/>');
    expect(media.statusCode).toBe(415);
    expect(media.json()).toEqual(envelope('UNSUPPORTED_MEDIA_TYPE'));
    const bad = await post('/v1/webdata/extractions', 'application/json', '{"url":');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual(envelope('VALIDATION_ERROR'));
    const unknown = await post('/v1/nothing-here', 'application/json', '{}');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual(envelope('NOT_FOUND'));
  });

  it('a known path with another method is 405 with Allow', async () => {
    const list = await t.v1('PUT', '/webdata/extractions', live);
    expect(list.statusCode).toBe(405);
    expect(list.headers.allow).toBe('GET, POST');
    expect(list.json()).toEqual(envelope('METHOD_NOT_ALLOWED'));
    const one = await t.v1('PATCH', '/webdata/extractions/x', live);
    expect(one.statusCode).toBe(405);
    expect(one.headers.allow).toBe('DELETE, GET');
    // The trailing slash is another path, as the router sees it.
    expect((await t.v1('PUT', '/webdata/extractions/', live)).statusCode).toBe(404);
  });
});

/**
 * Sends `size` bytes over a real connection; resolves with the answer once the request side is finished
 * too, and rejects if the send failed at any point (an answer followed by EPIPE counts as a failure).
 */
function sendLarge(size: number, opts: { chunked?: boolean } = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL('/v1/webdata/extractions', t.url);
    const req = http.request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${live}`,
        'content-type': 'application/json',
        ...(opts.chunked ? {} : { 'content-length': String(size) }),
      },
    });
    let answer: { status: number; body: string } | undefined;
    let sentAll = false;
    const settle = () => {
      if (answer && sentAll) resolve(answer);
    };
    req.on('error', reject);
    req.on('finish', () => {
      sentAll = true;
      // Errors surface on the next turns; a clean send is settled a little later.
      setTimeout(settle, 50);
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => {
        answer = { status: res.statusCode ?? 0, body };
        setTimeout(settle, 50);
      });
      res.on('error', reject);
    });
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n)))
          return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('413 after the body is read', () => {
  it('a 20 MB body with its length announced gets the 413 envelope, not EPIPE', async () => {
    const res = await sendLarge(20 * 1024 * 1024);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual(envelope('PAYLOAD_TOO_LARGE'));
  });

  it('so does a 20 MB chunked body, refused while it streams', async () => {
    const res = await sendLarge(20 * 1024 * 1024, { chunked: true });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual(envelope('PAYLOAD_TOO_LARGE'));
  });
});

describe('drainBody', () => {
  it('resolves true when the body ends within the bound', async () => {
    const s = new PassThrough();
    const done = drainBody(s, { bytes: 100, ms: 1000 });
    s.write(Buffer.alloc(60));
    s.end(Buffer.alloc(30));
    expect(await done).toBe(true);
  });

  it('gives up past the byte bound or the time bound', async () => {
    const big = new PassThrough();
    const over = drainBody(big, { bytes: 100, ms: 1000 });
    big.write(Buffer.alloc(150));
    expect(await over).toBe(false);
    expect(await drainBody(new PassThrough(), { bytes: 100, ms: 20 })).toBe(false);
  });
});

describe('clientErrorHandler', () => {
  function fakeSocket() {
    const out = { written: '', destroyed: false };
    const socket = {
      writable: true,
      get destroyed() {
        return out.destroyed;
      },
      write: (s: string) => {
        out.written += s;
        return true;
      },
      destroy: () => {
        out.destroyed = true;
      },
    } as unknown as Socket;
    return { socket, out };
  }

  it.each([
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'REQUEST_TIMEOUT'],
    ['HPE_HEADER_OVERFLOW', 431, 'HEADERS_TOO_LARGE'],
    ['HPE_INVALID_METHOD', 400, 'BAD_REQUEST'],
  ])('%s answers %i %s in the envelope and closes', (code, status, apiCode) => {
    const { socket, out } = fakeSocket();
    clientErrorHandler(Object.assign(new Error(code), { code }), socket);
    const [head, body] = out.written.split('\r\n\r\n');
    expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(head).toContain(`Content-Length: ${Buffer.byteLength(body!)}`);
    expect(JSON.parse(body!)).toEqual(envelope(apiCode));
    expect(out.destroyed).toBe(true);
  });

  it('writes nothing on a reset connection', () => {
    const { socket, out } = fakeSocket();
    clientErrorHandler(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), socket);
    expect(out.written).toBe('');
  });
});
