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
