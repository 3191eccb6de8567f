import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordModelUsage } from '../../src/areas/models/model-usage.ts';
import { type TestApp, testApp } from '../harness.ts';
import { seedApiKey, seedOrg } from '../seed.ts';
import { json, pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier ai usage | limits | budget | allow` against a real server, from recorded usage.

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

it('shows spend per key and model, sets budgets and an allow-list, and refuses bad input', async () => {
  const { org, owner } = await seedOrg(t.deps);
  const key = await seedApiKey(t.deps, org.id, 'live');
  const usage = { promptTokens: 100, completionTokens: 50, totalTokens: 150 };
  await recordModelUsage(t.deps, {
    orgId: org.id,
    environment: 'production',
    keyId: key.keyId,
    model: 'openai/gpt-4o-mini',
    usage,
    costUsd: 1.25,
  });
  const home = scratchHome();
  const run = (args: string[], asJson = true) =>
    pier([...args, ...(asJson ? ['--json'] : [])], { url, home, env: { PIER_TOKEN: owner.token } });

  const text = await run(['ai', 'usage', '--org', org.slug], false);
  expect(text.code).toBe(0);
  expect(text.stdout).toContain('openai/gpt-4o-mini');
  expect(text.stdout).toContain('Total: $1.25, 1 requests.');
  const u = json<{ rows: { keyId: string; costUsd: number }[] }>(
    await run(['ai', 'usage', '--org', org.slug]),
  );
  expect(u.rows).toEqual([expect.objectContaining({ keyId: key.keyId, costUsd: 1.25 })]);

  expect(json(await run(['ai', 'budget', '10', '--org', org.slug]))).toEqual({
    keyId: null,
    monthlyBudgetUsd: 10,
    spentUsd: 1.25,
  });
  expect(json(await run(['ai', 'budget', '2', '--org', org.slug, '--key', key.keyId]))).toMatchObject({
    keyId: key.keyId,
    monthlyBudgetUsd: 2,
  });
  expect(
    json(await run(['ai', 'allow', key.keyId, 'gpt-4o-mini', 'anthropic/*', '--org', org.slug])),
  ).toEqual({
    keyId: key.keyId,
    allowedModels: ['gpt-4o-mini', 'anthropic/*'],
  });
  const limits = await run(['ai', 'limits', '--org', org.slug], false);
  expect(limits.stdout).toContain('$1.25 of $10.00');
  expect(limits.stdout).toContain('gpt-4o-mini, anthropic/*');

  expect((await run(['ai', 'budget', '-1', '--org', org.slug])).code).not.toBe(0);
  expect((await run(['ai', 'allow', key.keyId, '--org', org.slug])).code).not.toBe(0);
  const unknown = await run(['ai', 'budget', '5', '--org', org.slug, '--key', 'nosuchkey']);
  expect(unknown.code).not.toBe(0);
  expect(unknown.stderr + unknown.stdout).toContain('API_KEY_NOT_FOUND');
});
