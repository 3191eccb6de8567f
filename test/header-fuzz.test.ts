import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from './harness.ts';
import { seedV1Tenant } from './seed.ts';
import type { V1Tenant } from './v1-security.ts';

// Bad cookies, headers and paths are the client's mistake (or an attacker's probe): they answer 4xx or are
// ignored, never 5xx. A malformed `pier_session` cookie (bad percent-encoding) used to answer 500.

let t: TestApp;
let a: V1Tenant;
beforeAll(async () => {
  t = await testApp();
  a = await seedV1Tenant(t.deps);
});
afterAll(async () => {
  await t?.close();
});

type Req = { method: 'GET' | 'POST'; url: string; body?: string };
const targets: Req[] = [
  { method: 'GET', url: '/api/dashboard/session' },
  { method: 'POST', url: '/api/dashboard/sign-out', body: '{}' },
  { method: 'POST', url: '/api/fn/whoamiForCli', body: '{}' },
  { method: 'POST', url: '/api/fn/listMyOrgsForCli', body: '{}' },
  { method: 'GET', url: '/v1/mail/emails' },
  { method: 'GET', url: '/inbox' },
  { method: 'GET', url: '/healthz' },
];

async function send(r: Req, headers: Record<string, string>) {
  return t.app.inject({
    method: r.method,
    url: r.url,
    headers: { ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(r.body !== undefined ? { payload: r.body } : {}),
  });
}

// What a header value can hold on the wire (visible ASCII, space, tab), weighted towards the characters
// that trip parsers: %, ;, =, quotes, backslashes and commas.
const headerText = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('%', ';', '=', '"', '\\', ',', ' ', '%E0%A4%A', '%zz', '\t') },
      { weight: 5, arbitrary: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) },
    ),
    { maxLength: 60 },
  )
  .map((cs) => cs.join('').trim());

describe('malformed cookies and headers never answer 5xx', () => {
  it('a malformed pier_session cookie is no session (401 or the signed-out answer), not 500', async () => {
    for (const cookie of [
      'pier_session=%E0%A4%A',
      'pier_session=%',
      'pier_session="unterminated',
      'pier_session',
      '=; ;pier_session==%%',
      `pier_session=${'%41'.repeat(2000)}`,
    ]) {
      for (const r of targets) {
        const res = await send(r, { cookie });
        expect(res.statusCode, `${r.method} ${r.url} with cookie ${cookie.slice(0, 40)}`).toBeLessThan(500);
      }
      const fnCall = await send(targets[2]!, { cookie });
      expect(fnCall.statusCode).toBe(401);
    }
  });

  it('fuzzed cookies, credentials and request headers', async () => {
    const headerNames = [
      'cookie',
      'authorization',
      'x-request-id',
      'idempotency-key',
      'origin',
      'sec-fetch-site',
      'x-csrf-token',
      'accept-encoding',
      'content-type',
      'x-forwarded-for',
      'host',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...targets),
        fc.dictionary(fc.constantFrom(...headerNames), headerText, { maxKeys: 4 }),
        fc.boolean(),
        fc.boolean(),
        async (r, headers, withSession, withKey) => {
          const h = { ...headers };
          if (withSession) h.cookie = `pier_session=${h.cookie ?? ''}; ${h.cookie ?? ''}`;
          if (h.host === '') delete h.host;
          if (h.authorization === undefined && r.url.startsWith('/v1/') && withKey)
            h.authorization = `Bearer ${a.live}`;
          const res = await send(r, h);
          expect(
            res.statusCode,
            `${r.method} ${r.url} ${JSON.stringify(h)}: ${res.body.slice(0, 200)}`,
          ).toBeLessThan(500);
        },
      ),
      { numRuns: 300, seed: 16 },
    );
  });

  it('malformed percent-encoding in a path', async () => {
    for (const url of ['/%E0%A4%A', '/assets/%', '/inbox/%zz', '/v1/mail/emails/%E0%A4%A', '/api/fn/%']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeLessThan(500);
    }
  });
});
