import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type FnInput, type FnOutput, PierApiError, PierClient } from './client.ts';

// The SDK's request shape and error mapping, with an injected fetch (no server needed).

type Seen = { url: string; init: RequestInit };

function fakeFetch(answer: () => Response | Promise<Response>, seen: Seen[] = []): typeof fetch {
  return (async (url: string | URL | Request, init?: RequestInit) => {
    seen.push({ url: String(url), init: init ?? {} });
    return answer();
  }) as typeof fetch;
}

async function failure(p: Promise<unknown>): Promise<PierApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(PierApiError);
    return err as PierApiError;
  }
  throw new Error('expected a failure');
}

describe('PierClient', () => {
  it('POSTs the flat JSON body with the bearer token and returns the whole 200 body', async () => {
    const seen: Seen[] = [];
    const body = { user: { id: 'u1', email: 'a@example.com' }, token: { label: 'x', createdAt: 'now' } };
    const c = new PierClient({
      baseUrl: 'http://pier.test/',
      token: 'pk.abc.def',
      fetch: fakeFetch(() => Response.json(body), seen),
    });
    expect(await c.call('whoamiForCli')).toEqual(body);
    await c.call('getProjectForCli', { slug: 'shop' });
    expect(seen[0]!.url).toBe('http://pier.test/api/fn/whoamiForCli');
    expect(seen[0]!.init.method).toBe('POST');
    expect(seen[0]!.init.body).toBe('{}');
    expect((seen[0]!.init.headers as Record<string, string>).authorization).toBe('Bearer pk.abc.def');
    expect(seen[1]!.init.body).toBe('{"slug":"shop"}');
    const anon = c.withToken(undefined);
    await anon.call('exchangeCliAuthCode', { code: 'BCDF-GHJK' });
    expect((seen[2]!.init.headers as Record<string, string>).authorization).toBeUndefined();
  });

  it('maps the error envelope to PierApiError with code, status, message, request id and Retry-After', async () => {
    const c = new PierClient({
      baseUrl: 'http://pier.test',
      fetch: fakeFetch(() =>
        Response.json(
          { error: { code: 'RATE_LIMITED', message: 'Too many requests; retry in 7 s.' } },
          { status: 429, headers: { 'retry-after': '7', 'x-request-id': 'req-1' } },
        ),
      ),
    });
    const err = await failure(c.call('whoamiForCli'));
    expect(err).toMatchObject({
      code: 'RATE_LIMITED',
      status: 429,
      message: 'Too many requests; retry in 7 s.',
      requestId: 'req-1',
      retryAfterSec: 7,
    });
  });

  it('turns answers that are not Pier JSON into BAD_RESPONSE', async () => {
    const html = new PierClient({
      baseUrl: 'http://pier.test',
      fetch: fakeFetch(
        () => new Response('<h1>Bad gateway</h1>', { status: 502, statusText: 'Bad Gateway' }),
      ),
    });
    expect(await failure(html.call('whoamiForCli'))).toMatchObject({ code: 'BAD_RESPONSE', status: 502 });
    const text = new PierClient({ baseUrl: 'http://pier.test', fetch: fakeFetch(() => new Response('ok')) });
    expect(await failure(text.call('whoamiForCli'))).toMatchObject({ code: 'BAD_RESPONSE', status: 200 });
  });

  it('turns a refused connection into NETWORK_ERROR naming the URL', async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const c = new PierClient({ baseUrl: `http://127.0.0.1:${port}` });
    const err = await failure(c.call('whoamiForCli'));
    expect(err.code).toBe('NETWORK_ERROR');
    expect(err.status).toBe(0);
    expect(err.message).toBe(`Could not reach Pier at http://127.0.0.1:${port} (ECONNREFUSED).`);
  });

  it('gives up after timeoutMs with TIMEOUT', async () => {
    const hang = ((_url: string, init: RequestInit) =>
      new Promise((_resolve, reject) =>
        init.signal!.addEventListener('abort', () => reject(init.signal!.reason)),
      )) as unknown as typeof fetch;
    const c = new PierClient({ baseUrl: 'http://pier.test', timeoutMs: 20, fetch: hang });
    expect(await failure(c.call('whoamiForCli'))).toMatchObject({ code: 'TIMEOUT', status: 0 });
  });

  it('refuses a base URL that is not http(s)', () => {
    expect(() => new PierClient({ baseUrl: 'pier.test' })).toThrow(PierApiError);
    expect(() => new PierClient({ baseUrl: 'ftp://pier.test' })).toThrow(/not an http/);
  });

  it('infers inputs and outputs from the function registry', () => {
    expectTypeOf<FnInput<'setSecretForCli'>>().toEqualTypeOf<{
      projectSlug: string;
      key: string;
      value: string;
    }>();
    expectTypeOf<FnOutput<'exchangeCliAuthCode'>>().toEqualTypeOf<{
      token: string;
      label: string;
      user: { id: string; email: string };
    }>();
    const c = new PierClient({ baseUrl: 'http://pier.test', fetch: fakeFetch(() => Response.json({})) });
    expectTypeOf(c.call<'listMyOrgsForCli'>).returns.resolves.toEqualTypeOf<
      { id: string; slug: string; name: string; role: 'owner' | 'admin' | 'member' }[]
    >();
    // @ts-expect-error setSecretForCli needs its input
    void c.call('setSecretForCli').catch(() => {});
    // @ts-expect-error no such function
    void c.call('noSuchFunction', {}).catch(() => {});
  });
});
