import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import { seedOrg, seedV1Tenant } from '../../test/seed.ts';
import { surrogateEscapesInUrl, unpairedSurrogateAt } from './unicode.ts';

// An unpaired UTF-16 surrogate is refused wherever a request carries text (docs/v1-api.md, "Before any operation runs"): PostgreSQL
// cannot hold it in jsonb and rewrites it in text. The bodies are sent as raw JSON text, since `\ud800`
// escapes are how one arrives (UTF-8 bytes never decode to one).

let t: TestApp;
let live: string;
let user: string;
let orgSlug: string;

beforeAll(async () => {
  t = await testApp();
  live = (await seedV1Tenant(t.deps)).live;
  const { org, owner } = await seedOrg(t.deps);
  user = owner.token;
  orgSlug = org.slug;
});
afterAll(async () => {
  await t?.close();
});

const post = (url: string, token: string, raw: string) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: raw,
  });

function expectRefused(res: { statusCode: number; json(): unknown }, field: string) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toEqual({
    error: { code: 'VALIDATION_ERROR', message: `${field}: contains an unpaired UTF-16 surrogate.` },
  });
}

describe('unpaired surrogates', () => {
  it('are refused in a function body, naming the field', async () => {
    const res = await post(
      '/api/fn/startWebExtractionForCli',
      user,
      `{"orgSlug":"${orgSlug}","url":"https://example.com/","prompt":"a\\ud800b"}`,
    );
    expectRefused(res, 'body.prompt');
  });

  it('are refused in v1 web extraction prompt and waitForSelector, and in the embeddings model', async () => {
    expectRefused(
      await post('/v1/webdata/extractions', live, '{"url":"https://example.com/","prompt":"a\\udc00"}'),
      'body.prompt',
    );
    expectRefused(
      await post(
        '/v1/webdata/extractions',
        live,
        '{"url":"https://example.com/","waitForSelector":"\\uD83D"}',
      ),
      'body.waitForSelector',
    );
    expectRefused(await post('/v1/ai/embeddings', live, '{"model":"m\\ud800","input":"hi"}'), 'body.model');
  });

  it('are refused in nested values and keys', async () => {
    expectRefused(
      await post(
        '/v1/webdata/extractions',
        live,
        '{"url":"https://example.com/","schema":{"a":["x","\\ud800"]}}',
      ),
      'body.schema.a.1',
    );
    const res = await post('/v1/webdata/extractions', live, '{"url":"https://example.com/","\\ud800":1}');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
  });

  it('are refused in a query parameter and a path id (percent-escaped as UTF-8 would spell them)', async () => {
    expectRefused(await t.v1('GET', '/webdata/extractions?cursor=a%ED%A0%80', live), 'querystring.cursor');
    expectRefused(await t.v1('GET', '/webdata/extractions?%ED%A0%80=1', live), 'querystring.%ED%A0%80');
    expectRefused(await t.v1('GET', '/webdata/extractions/%ED%B0%80', live), 'params.id');
    expectRefused(await t.v1('GET', '/mail/emails/x%ed%a0%80y', live), 'params.id');
  });

  it('leave paired surrogates (astral characters) and their escapes alone', async () => {
    const res = await post(
      '/v1/webdata/extractions',
      live,
      '{"url":"https://example.com/","prompt":"😀 and \\ud83d\\ude00","waitForSelector":"#a"}',
    );
    expect(res.statusCode).toBe(200);
    const q = await t.v1('GET', '/webdata/extractions/%F0%9F%98%80', live);
    expect(q.statusCode).toBe(404);
  });

  it('are refused at the MCP endpoint, in tool arguments too', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: `Bearer ${user}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload:
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"prompt":"\\ud800"}}}',
    });
    expectRefused(res, 'body.params.arguments.prompt');
  });

  it('are refused by the OAuth endpoints in their own error shape', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      payload: '{"client_name":"x\\ud800","redirect_uris":["http://127.0.0.1/cb"]}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'invalid_request',
      error_description: 'body.client_name: contains an unpaired UTF-16 surrogate.',
    });
    // A form body too, where URLSearchParams would have made the escape U+FFFD.
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=authorization_code&code=a%ED%A0%80b&redirect_uri=x',
    });
    expect(form.statusCode).toBe(400);
    expect(form.json()).toEqual({
      error: 'invalid_request',
      error_description: 'body.code: contains an unpaired UTF-16 surrogate.',
    });
  });
});

describe('surrogateEscapesInUrl', () => {
  it('spells out escaped surrogates in the path only; the query keeps its text', () => {
    expect(surrogateEscapesInUrl({ url: '/v1/x/%ED%A0%80?q=%ed%b0%80' })).toBe('/v1/x/\ud800?q=%ed%b0%80');
    expect(surrogateEscapesInUrl({ url: '/v1/x?q=%ED%A0%80' })).toBe('/v1/x?q=%ED%A0%80');
    expect(surrogateEscapesInUrl({ url: '/v1/x/%C3%A9' })).toBe('/v1/x/%C3%A9');
  });

  it('leaves a route that reads no query untouched by an escaped surrogate there', async () => {
    expect((await t.app.inject({ url: '/healthz?x=%ED%A0%80' })).statusCode).toBe(200);
  });
});

describe('unpairedSurrogateAt', () => {
  it('names the first string or key that is not well-formed', () => {
    expect(unpairedSurrogateAt({ a: 'ok', b: ['😀', { c: 'x\ud800' }] })).toBe('b.1.c');
    expect(unpairedSurrogateAt('\udfff')).toBe('');
    expect(unpairedSurrogateAt({ a: 1, b: null, c: true })).toBeNull();
    expect(unpairedSurrogateAt({ 'k\ud800': 1 })).toBe('k\ufffd');
  });
});
