import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../harness.ts';
import { seedOperator, seedOrg } from '../seed.ts';
import { json, pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier keys …` and `pier admin api-key create` against a real server; each key is tried on /v1.

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
});

const works = async (key: string) => (await t.v1('GET', '/mail/emails', key)).statusCode;

it('creates, lists and revokes API keys; the operator creates them too', async () => {
  const { org, owner } = await seedOrg(t.deps);
  const home = scratchHome();
  const run = (args: string[], env: Record<string, string> = { PIER_TOKEN: owner.token }) =>
    pier([...args, '--json'], { url, home, env });

  const k = json<{ key: string; keyId: string; kind: string }>(
    await run(['keys', 'create', '--org', org.slug, '--kind', 'test', '--label', 'ci']),
  );
  expect(k.key).toMatch(/^sk_test\./);
  expect(await works(k.key)).toBe(200);
  const listed = json<{ keyId: string; label: string }[]>(await run(['keys', 'list', '--org', org.slug]));
  expect(listed).toEqual([expect.objectContaining({ keyId: k.keyId, label: 'ci' })]);
  expect(json(await run(['keys', 'revoke', k.keyId, '--org', org.slug]))).toEqual({
    ok: true,
    keyId: k.keyId,
  });
  expect(await works(k.key)).toBe(401);

  const bad = await run(['keys', 'create', '--org', org.slug, '--kind', 'prod']);
  expect(bad.code).toBe(2);

  const op = await seedOperator(t.deps);
  const a = json<{ key: string; keyId: string }>(
    await run(['admin', 'api-key', 'create', '--org', org.slug, '--kind', 'live'], {
      PIER_OPERATOR_KEY: op.token,
    }),
  );
  expect(Object.keys(a).sort()).toEqual(['key', 'keyId']);
  expect(a.key).toMatch(/^sk_live\./);
  expect(await works(a.key)).toBe(200);
});

it("sets a key's own v1 rate limit at creation and with keys limit; refuses half a limit", async () => {
  const { org, owner } = await seedOrg(t.deps);
  const home = scratchHome();
  const run = (args: string[]) => pier([...args, '--json'], { url, home, env: { PIER_TOKEN: owner.token } });

  const k = json<{ keyId: string; rateLimit: unknown }>(
    await run(['keys', 'create', '--org', org.slug, '--kind', 'test', '--per-sec', '2', '--burst', '7']),
  );
  expect(k.rateLimit).toEqual({ perSec: 2, burst: 7 });
  const v1 = await t.v1('GET', '/mail/emails', (k as unknown as { key: string }).key);
  expect(v1.headers['ratelimit-policy']).toBe('"v1";q=7;w=4');

  expect(json(await run(['keys', 'limit', k.keyId, '--org', org.slug, '--clear']))).toEqual({
    keyId: k.keyId,
    label: 'test key',
    rateLimit: null,
  });
  const set = json<{ rateLimit: unknown }>(
    await run(['keys', 'limit', k.keyId, '--org', org.slug, '--per-sec', '1', '--burst', '3']),
  );
  expect(set.rateLimit).toEqual({ perSec: 1, burst: 3 });

  expect((await run(['keys', 'create', '--org', org.slug, '--kind', 'test', '--burst', '3'])).code).not.toBe(
    0,
  );
  expect((await run(['keys', 'limit', k.keyId, '--org', org.slug])).code).not.toBe(0);
  const op = await seedOperator(t.deps);
  const a = json<{ key: string }>(
    await pier(
      [
        'admin',
        'api-key',
        'create',
        '--org',
        org.slug,
        '--kind',
        'live',
        '--per-sec',
        '3',
        '--burst',
        '9',
        '--json',
      ],
      { url, home, env: { PIER_OPERATOR_KEY: op.token } },
    ),
  );
  expect((await t.v1('GET', '/mail/emails', a.key)).headers['ratelimit-policy']).toBe('"v1";q=9;w=3');

  // A whole burst is checked by the server: 400 VALIDATION_ERROR, shown by the CLI.
  const half = await run(['keys', 'limit', k.keyId, '--org', org.slug, '--per-sec', '1', '--burst', '1.5']);
  expect(half.code).not.toBe(0);
});
