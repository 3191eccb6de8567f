import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import { expectAuthRequired, expectError } from '../../test/security.ts';
import { seedOperator } from '../../test/seed.ts';
import { projectSecretEnv } from '../areas/orgs/secrets.ts';

// A restart keeps everything that matters: the same PGlite data directory (or PostgreSQL database) and the
// same master key, a new process-worth of caches.

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ persist: true });
});
afterAll(async () => {
  await t?.close();
});

describe('restart persistence', () => {
  it('keeps users, tokens, organizations, projects, secrets, revocations and used codes', async () => {
    const op = (await seedOperator(t.deps)).token;
    const org = (
      await t.call('adminCreateOrg', { slug: 'keep-org', name: 'Keep', ownerEmail: 'keep@example.com' }, op)
    ).json();
    const { code } = (
      await t.call('adminCreateLoginCode', { email: 'keep@example.com', label: 'laptop' }, op)
    ).json();
    const { token } = (await t.call('exchangeCliAuthCode', { code })).json();
    const { code: code2 } = (await t.call('adminCreateLoginCode', { email: 'keep@example.com' }, op)).json();
    const { token: revoked } = (await t.call('exchangeCliAuthCode', { code: code2 })).json();
    await t.call('revokeTokenForCli', {}, revoked);
    const { code: unused } = (await t.call('adminCreateLoginCode', { email: 'keep@example.com' }, op)).json();
    const project = (
      await t.call('createProjectForCli', { orgSlug: 'keep-org', slug: 'keep-app', name: 'App' }, token)
    ).json();
    expect(
      (await t.call('setSecretForCli', { projectSlug: 'keep-app', key: 'KEPT', value: 's3cr3t' }, token))
        .statusCode,
    ).toBe(200);
    const plat = (await t.call('adminCreatePlatformCredential', { scopes: ['project.create'] }, op)).json()
      .credential;

    t = await t.restart();

    expect((await t.call('whoamiForCli', {}, token)).json()).toMatchObject({
      user: { email: 'keep@example.com' },
      token: { label: 'laptop' },
    });
    expectAuthRequired(await t.call('whoamiForCli', {}, revoked));
    expect((await t.call('listMyOrgsForCli', {}, token)).json()).toEqual([
      { id: org.id, slug: 'keep-org', name: 'Keep', role: 'owner' },
    ]);
    expect((await t.call('getProjectForCli', { slug: 'keep-app' }, token)).json()).toEqual(project);
    expect(await projectSecretEnv(t.deps, project.id)).toEqual({ KEPT: 's3cr3t' });
    expectError(await t.call('exchangeCliAuthCode', { code }), 400, 'CODE_USED');
    expect((await t.call('exchangeCliAuthCode', { code: unused })).statusCode).toBe(200);
    expect(
      (await t.call('createProjectInOrg', { orgId: org.id, slug: 'keep-two', name: 'Two' }, plat)).statusCode,
    ).toBe(200);
    expect((await t.call('adminCreateUser', { email: 'keep@example.com' }, op)).json().created).toBe(false);
  });
});
