import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type TestApp, testApp } from '../../test/harness.ts';
import { seedMember, seedOperator, seedV1Tenant } from '../../test/seed.ts';
import type { ManualClock } from '../core/clock.ts';
import { errors } from '../core/errors.ts';
import { installErrorHandler } from './error-handler.ts';
import { defineRoute, defineV1Routes } from './v1-kit.ts';
import { v1Routes } from './v1-plugin.ts';

// The v1 plumbing on a small test area: auth, environments, idempotency, rate limits, OpenAPI.

let seq = 0;
const probeArea = defineV1Routes({
  name: 'probe',
  prefix: '/probe',
  routes: [
    defineRoute({
      method: 'POST',
      url: '/things',
      name: 'probe.create',
      summary: 'Creates a thing.',
      body: z.strictObject({ n: z.number().int() }),
      response: z.object({ seq: z.number(), n: z.number(), orgId: z.string(), environment: z.string() }),
      status: 201,
      errors: [],
      handler: async ({ caller }, { body }) => {
        if (body.n === 500) throw new Error('boom');
        if (body.n === 404) throw errors.notFound('NOT_FOUND', 'Thing');
        return { seq: ++seq, n: body.n, orgId: caller.orgId, environment: caller.environment };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/whoami',
      name: 'probe.whoami',
      summary: 'Who is calling.',
      response: z.object({ orgId: z.string(), environment: z.string() }),
      errors: [],
      handler: async ({ caller }) => ({ orgId: caller.orgId, environment: caller.environment }),
    }),
  ],
});

async function probeApp(t: TestApp): Promise<FastifyInstance> {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('caller', null);
  installErrorHandler(app, 'http://pier.test');
  await app.register(v1Routes, { deps: t.deps, prefix: '/v1', groups: [probeArea] });
  await app.ready();
  return app;
}

let t: TestApp;
let app: FastifyInstance;
beforeAll(async () => {
  t = await testApp();
  app = await probeApp(t);
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

const post = (key: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: '/v1/probe/things',
    headers: {
      'content-type': 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    payload: JSON.stringify(body),
  });

describe('API keys (function API)', () => {
  it('owners create, list and revoke keys; members cannot create; a revoked key stops at once', async () => {
    const { org, owner } = await seedV1Tenant(t.deps);
    const created = await t.call(
      'createApiKeyForCli',
      { orgSlug: org.slug, kind: 'test', label: 'ci' },
      owner.token,
    );
    expect(created.statusCode).toBe(200);
    const k = created.json();
    expect(k).toMatchObject({ kind: 'test', label: 'ci' });
    expect(k.key).toMatch(new RegExp(`^sk_test\\.${k.keyId}\\.`));

    const who = await t.v1('GET', '/probe/whoami', k.key);
    expect(who.statusCode).toBe(404); // probe area is not mounted on the real app
    const viaProbe = await app.inject({
      url: '/v1/probe/whoami',
      headers: { authorization: `Bearer ${k.key}` },
    });
    expect(viaProbe.json()).toEqual({ orgId: org.id, environment: 'sandbox' });

    const list = await t.call('listApiKeysForCli', { orgSlug: org.slug }, owner.token);
    expect(list.json().map((x: { keyId: string }) => x.keyId)).toContain(k.keyId);
    expect(JSON.stringify(list.json())).not.toContain(k.key);

    const member = await seedMember(t.deps, org.id, 'member');
    const denied = await t.call('createApiKeyForCli', { orgSlug: org.slug, kind: 'live' }, member.token);
    expect(denied.json().error.code).toBe('FORBIDDEN');
    const outsider = await seedV1Tenant(t.deps);
    const hidden = await t.call(
      'revokeApiKeyForCli',
      { orgSlug: org.slug, keyId: k.keyId },
      outsider.owner.token,
    );
    expect(hidden.json().error.code).toBe('ORG_NOT_FOUND');

    const revoked = await t.call('revokeApiKeyForCli', { orgSlug: org.slug, keyId: k.keyId }, owner.token);
    expect(revoked.json()).toEqual({ ok: true, keyId: k.keyId });
    const after = await app.inject({
      url: '/v1/probe/whoami',
      headers: { authorization: `Bearer ${k.key}` },
    });
    expect(after.statusCode).toBe(401);
    const again = await t.call('revokeApiKeyForCli', { orgSlug: org.slug, keyId: k.keyId }, owner.token);
    expect(again.json().error.code).toBe('API_KEY_NOT_FOUND');
    const listed = await t.call('listApiKeysForCli', { orgSlug: org.slug }, owner.token);
    expect(listed.json().map((x: { keyId: string }) => x.keyId)).not.toContain(k.keyId);
  });

  it('the operator creates keys for any organization', async () => {
    const { org } = await seedV1Tenant(t.deps);
    const op = await seedOperator(t.deps);
    const r = await t.call('adminCreateApiKey', { orgSlug: org.slug, kind: 'live' }, op.token);
    expect(Object.keys(r.json()).sort()).toEqual(['key', 'keyId']);
    const who = await app.inject({
      url: '/v1/probe/whoami',
      headers: { authorization: `Bearer ${r.json().key}` },
    });
    expect(who.json()).toEqual({ orgId: org.id, environment: 'production' });
    const missing = await t.call('adminCreateApiKey', { orgSlug: 'no-such-org', kind: 'live' }, op.token);
    expect(missing.json().error.code).toBe('ORG_NOT_FOUND');
  });
});

describe('v1 plumbing', () => {
  it('answers 401 without a key, 403 for other credentials, 400 for bad input', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const none = await post(undefined, { n: 1 });
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('AUTH_REQUIRED');
    const personal = await post(tenant.owner.token, { n: 1 });
    expect(personal.json().error.code).toBe('FORBIDDEN');
    const bad = await post(tenant.live, { n: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_ERROR');
    const ok = await post(tenant.live, { n: 1 });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ orgId: tenant.org.id, environment: 'production' });
  });

  it('replays a POST with the same Idempotency-Key and body; another body is a 409', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const h = { 'idempotency-key': 'order-1' };
    const first = await post(tenant.live, { n: 7 }, h);
    const second = await post(tenant.live, { n: 7 }, h);
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expect(second.headers['idempotent-replayed']).toBe('true');
    const conflict = await post(tenant.live, { n: 8 }, h);
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error.code).toBe('IDEMPOTENCY_CONFLICT');

    // Keys belong to an organization and environment.
    const sandbox = await post(tenant.test, { n: 8 }, h);
    expect(sandbox.statusCode).toBe(201);
    const other = await seedV1Tenant(t.deps);
    expect((await post(other.live, { n: 9 }, h)).statusCode).toBe(201);

    // Errors below 500 are replayed too; a 5xx releases the key for a retry.
    const e404 = await post(tenant.live, { n: 404 }, { 'idempotency-key': 'k404' });
    expect(
      (await post(tenant.live, { n: 404 }, { 'idempotency-key': 'k404' })).headers['idempotent-replayed'],
    ).toBe('true');
    expect(e404.statusCode).toBe(404);
    const e500 = await post(tenant.live, { n: 500 }, { 'idempotency-key': 'k500' });
    expect(e500.statusCode).toBe(500);
    const retry = await post(tenant.live, { n: 500 }, { 'idempotency-key': 'k500' });
    expect(retry.headers['idempotent-replayed']).toBeUndefined();

    // After 24 h the key is free again.
    (t.clock as ManualClock).advance(24 * 3600 * 1000 + 1);
    const later = await post(tenant.live, { n: 8 }, h);
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.json().seq).not.toBe(first.json().seq);

    const badKey = await post(tenant.live, { n: 1 }, { 'idempotency-key': 'x'.repeat(300) });
    expect(badKey.statusCode).toBe(400);
  });

  it('serves the OpenAPI document without a key', async () => {
    const doc = await app.inject({ url: '/v1/openapi.json' });
    expect(doc.statusCode).toBe(200);
    const ops = Object.values(doc.json().paths as Record<string, Record<string, { operationId: string }>>)
      .flatMap((p) => Object.values(p))
      .map((o) => o.operationId);
    expect(ops).toEqual(expect.arrayContaining(['probe.create', 'probe.whoami']));
    const real = await t.app.inject({ url: '/v1/openapi.json' });
    expect(real.json().openapi).toBe('3.1.0');
  });
});

describe('rate limits', () => {
  it('refuses past the burst with 429, Retry-After and RateLimit headers, and refills over time', async () => {
    const rt = await testApp({ env: { V1_RATE_LIMIT_BURST: '3', V1_RATE_LIMIT_PER_SEC: '1' } });
    const rapp = await probeApp(rt);
    try {
      const tenant = await seedV1Tenant(rt.deps);
      const get = (key: string) =>
        rapp.inject({ url: '/v1/probe/whoami', headers: { authorization: `Bearer ${key}` } });
      const codes: number[] = [];
      for (let i = 0; i < 3; i++) codes.push((await get(tenant.live)).statusCode);
      expect(codes).toEqual([200, 200, 200]);
      const refused = await get(tenant.live);
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.code).toBe('RATE_LIMITED');
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers['ratelimit-policy']).toBe('"v1";q=3;w=3');
      expect(refused.headers.ratelimit).toMatch(/^"v1";r=0;t=1$/);
      // Each key has its own bucket.
      expect((await get(tenant.test)).statusCode).toBe(200);
      (rt.clock as ManualClock).advance(1000);
      expect((await get(tenant.live)).statusCode).toBe(200);
      expect((await get(tenant.live)).statusCode).toBe(429);
    } finally {
      await rapp.close();
      await rt.close();
    }
  });
});
