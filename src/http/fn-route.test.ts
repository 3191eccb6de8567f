import net from 'node:net';
import { discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import {
  expectAuthRequired,
  expectCredentialGuards,
  expectError,
  WWW_AUTHENTICATE,
} from '../../test/security.ts';
import { seedUser } from '../../test/seed.ts';
import type { FnDef } from './fn-kit.ts';
import { functions } from './fn-registry.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const defs = functions as readonly FnDef[];

describe('credential guards of every function', () => {
  for (const def of defs.filter((d) => d.auth.kind !== 'none')) {
    it(`${def.name} (${def.auth.kind}${'scope' in def.auth ? ` ${def.auth.scope}` : ''})`, async () => {
      await expectCredentialGuards(t, def.name, def.auth);
    });
  }
});

describe('calling convention', () => {
  it('refuses an args wrapper, unknown keys, non-objects and malformed JSON with 400 VALIDATION_ERROR', async () => {
    const { token } = await seedUser(t.deps);
    expectError(await t.call('getProjectForCli', { args: { slug: 'abc' } }, token), 400, 'VALIDATION_ERROR');
    expectError(await t.call('whoamiForCli', { extra: 1 }, token), 400, 'VALIDATION_ERROR');
    expectError(await t.call('whoamiForCli', [], token), 400, 'VALIDATION_ERROR');
    expectError(await t.call('whoamiForCli', 'null', token), 400, 'VALIDATION_ERROR');
    expectError(await t.call('whoamiForCli', '{"a":', token), 400, 'VALIDATION_ERROR');
    // An empty JSON body is {} (the contract): fine for a function that takes nothing, a 400 for one that needs input.
    expect((await t.call('whoamiForCli', '', token)).statusCode).toBe(200);
    expectError(await t.call('getProjectForCli', '', token), 400, 'VALIDATION_ERROR');
    expectError(await t.call('exchangeCliAuthCode', '{"__proto__":{"x":1}}'), 400, 'VALIDATION_ERROR');
    expectError(await t.call('exchangeCliAuthCode', { code: 42 }), 400, 'VALIDATION_ERROR');
    // PostgreSQL text cannot hold NUL: refused as input, never a 500 from the database.
    expectError(await t.call('adminCreateUser', { email: 'a\u0000@b.co' }, token), 403, 'FORBIDDEN');
    expectError(await t.call('getProjectForCli', { slug: 'a\u0000b' }, token), 400, 'VALIDATION_ERROR');
    expect((await t.call('whoamiForCli', {}, token)).statusCode).toBe(200);
  });

  it('answers 404 FUNCTION_NOT_FOUND for an unknown function, 405 for other methods', async () => {
    expectError(await t.call('noSuchFunction', {}), 404, 'FUNCTION_NOT_FOUND');
    expectError(await t.call('constructor', {}), 404, 'FUNCTION_NOT_FOUND');
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: '/api/fn/whoamiForCli' });
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe('POST');
    }
  });

  it('answers 415 for a non-JSON body and 413 for an oversized one', async () => {
    const post = (type: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/fn/exchangeCliAuthCode',
        headers: { 'content-type': type },
        payload: 'code=ABCD',
      });
    expectError(await post('application/xml'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    // Fastify parses text/plain as a string, which is then not the flat object the function takes.
    expectError(await post('text/plain'), 400, 'VALIDATION_ERROR');
    const big = await t.call('exchangeCliAuthCode', { code: 'x'.repeat(2 * 1024 * 1024) });
    expectError(big, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('gives every response a request id, echoing a sane one and replacing a bad one', async () => {
    const given = await t.app.inject({ url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const made = await t.app.inject({ url: '/healthz' });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await t.app.inject({ url: '/healthz', headers: { 'x-request-id': 'a b\u0000c' } });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const err = await t.call('nope', {}, undefined, { 'x-request-id': 'req-err' });
    expect(err.headers['x-request-id']).toBe('req-err');
  });

  it('serves /healthz and /readyz', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ ok: true });
    expect((await t.app.inject({ url: '/readyz' })).json()).toEqual({ ok: true });
  });
});

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1.0, version 1.0.0, with every function, its request, response and errors', async () => {
    const res = await t.app.inject({ url: '/api/fn/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    const paths = Object.keys(doc.paths).sort();
    expect(paths).toEqual(defs.map((d) => `/api/fn/${d.name}`).sort());
    for (const def of defs) {
      const op = doc.paths[`/api/fn/${def.name}`].post;
      expect(op.operationId).toBe(def.name);
      const body = op.requestBody.content['application/json'].schema;
      expect(body.type).toBe('object');
      expect(body.additionalProperties).toBe(false);
      expect(op.responses['200'].content['application/json'].schema).toBeTruthy();
      for (const s of ['400', '401', '403', '404', '429']) {
        const e = op.responses[s].content['application/json'].schema;
        expect(e.properties.error.properties.code.type).toBe('string');
      }
      for (const code of def.errors) expect(op.description).toContain(code);
    }
    const setSecret =
      doc.paths['/api/fn/setSecretForCli'].post.requestBody.content['application/json'].schema;
    expect(setSecret.required).toEqual(expect.arrayContaining(['projectSlug', 'key', 'value']));
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('protected-resource metadata (RFC 9728)', () => {
  it('is found by the MCP SDK client on a real listening server', async () => {
    // The shared app (PUBLIC_URL http://pier.test) listens on a free port; the client discovers from there.
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    await t.app.listen({ port, host: '127.0.0.1' });
    const meta = await discoverOAuthProtectedResourceMetadata(`${base}/api/fn/whoamiForCli`);
    expect(meta.resource).toBe('http://pier.test');
    expect(meta.scopes_supported).toEqual(['org.create', 'project.create', 'deploy', 'model.resolve']);
    expect(meta.bearer_methods_supported).toEqual(['header']);
    expect(meta.resource_name).toBe('Pier');
    expect(meta.resource_documentation).toBe('http://pier.test/api/fn/openapi.json');
    const types = (meta as Record<string, unknown>).pier_credential_types as {
      type: string;
      prefix: string;
    }[];
    expect(types.map((c) => [c.type, c.prefix])).toEqual([
      ['personal_token', 'pk.'],
      ['platform_credential', 'plat.'],
    ]);
    // A function's 401 points at the same document.
    const res = await fetch(`${base}/api/fn/whoamiForCli`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(WWW_AUTHENTICATE);
  });

  it('answers a missing credential with the WWW-Authenticate pointer', async () => {
    expectAuthRequired(await t.call('listMyOrgsForCli', {}));
  });
});
