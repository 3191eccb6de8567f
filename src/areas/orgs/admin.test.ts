import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { expectAuthRequired, expectError } from '../../../test/security.ts';
import { seedOperator, seedOrg, seedUser } from '../../../test/seed.ts';
import { issuePersonalToken } from '../identity/tokens.ts';

let t: TestApp;
let op: string;
beforeAll(async () => {
  t = await testApp();
  op = (await seedOperator(t.deps)).token;
});
afterAll(async () => {
  await t?.close();
});

const admin = (name: string, body: unknown) => t.call(name, body, op);

describe('operator functions', () => {
  it('adminCreateUser creates a user once (idempotent, e-mail normalised)', async () => {
    const email = `${uniq('New')}@Example.com`;
    const first = await admin('adminCreateUser', { email });
    expect(first.json()).toEqual({ id: expect.any(String), email: email.toLowerCase(), created: true });
    const again = await admin('adminCreateUser', { email: email.toLowerCase() });
    expect(again.json()).toEqual({ ...first.json(), created: false });
    expectError(await admin('adminCreateUser', { email: 'nope' }), 400, 'VALIDATION_ERROR');
  });

  it('adminCreateOrg creates an organization owned by the user', async () => {
    const slug = uniq('adm');
    const email = `${uniq('o')}@example.com`;
    const res = await admin('adminCreateOrg', { slug, name: 'Admin Made', ownerEmail: email });
    expect(res.json()).toEqual({
      id: expect.any(String),
      slug,
      name: 'Admin Made',
      plan: 'free',
      owner: { id: expect.any(String), email },
    });
    expectError(await admin('adminCreateOrg', { slug, name: 'X', ownerEmail: email }), 409, 'SLUG_TAKEN');
    expectError(
      await admin('adminCreateOrg', { slug: 'No!', name: 'X', ownerEmail: email }),
      400,
      'INVALID_SLUG',
    );
  });

  it('adminAddMember adds a member and changes a role', async () => {
    const { org } = await seedOrg(t.deps);
    const u = await seedUser(t.deps);
    const add = await admin('adminAddMember', { orgSlug: org.slug, email: u.user.email, role: 'member' });
    expect(add.json()).toEqual({ orgSlug: org.slug, email: u.user.email, role: 'member' });
    expect((await t.call('listMyOrgsForCli', {}, u.token)).json()[0].role).toBe('member');
    await admin('adminAddMember', { orgSlug: org.slug, email: u.user.email, role: 'admin' });
    expect((await t.call('listMyOrgsForCli', {}, u.token)).json()[0].role).toBe('admin');
    expectError(
      await admin('adminAddMember', { orgSlug: 'no-such-org', email: u.user.email, role: 'member' }),
      404,
      'ORG_NOT_FOUND',
    );
    expectError(
      await admin('adminAddMember', { orgSlug: org.slug, email: u.user.email, role: 'god' }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('adminSetPlan sets the plan', async () => {
    const { org } = await seedOrg(t.deps);
    expect((await admin('adminSetPlan', { orgSlug: org.slug, plan: 'pro' })).json()).toEqual({
      orgSlug: org.slug,
      plan: 'pro',
    });
    const { rows } = await t.deps.db.query<{ plan: string }>('SELECT plan FROM orgs WHERE id = $1', [org.id]);
    expect(rows[0]!.plan).toBe('pro');
    expectError(await admin('adminSetPlan', { orgSlug: 'no-such-org', plan: 'pro' }), 404, 'ORG_NOT_FOUND');
    expectError(await admin('adminSetPlan', { orgSlug: org.slug, plan: 'gold' }), 400, 'VALIDATION_ERROR');
  });

  it('adminCreateLoginCode mints a code the user can redeem', async () => {
    const email = `${uniq('l')}@example.com`;
    const res = await admin('adminCreateLoginCode', { email, label: 'support hand-off' });
    expect(res.json()).toEqual({
      code: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/),
      expiresAt: expect.any(String),
    });
    const ex = await t.call('exchangeCliAuthCode', { code: res.json().code });
    expect(ex.json()).toMatchObject({ label: 'support hand-off', user: { email } });
  });

  it('adminCreatePlatformCredential issues scoped credentials; adminRevokePlatformCredential stops them at once', async () => {
    const res = await admin('adminCreatePlatformCredential', {
      scopes: ['project.create', 'org.create', 'org.create'],
    });
    const { credential, keyId, scopes } = res.json();
    expect(credential).toMatch(/^plat\.[A-Za-z0-9]+\.[A-Za-z0-9_-]{43}$/);
    expect(credential.split('.')[1]).toBe(keyId);
    expect(scopes).toEqual(['org.create', 'project.create']);
    const ok = await t.call(
      'createOrganization',
      { email: `${uniq('c')}@example.com`, name: 'Via plat' },
      credential,
    );
    expect(ok.statusCode).toBe(200);
    expectError(await admin('adminCreatePlatformCredential', { scopes: ['root'] }), 400, 'VALIDATION_ERROR');
    expectError(await admin('adminCreatePlatformCredential', { scopes: [] }), 400, 'VALIDATION_ERROR');

    expect((await admin('adminRevokePlatformCredential', { keyId })).json()).toEqual({ ok: true, keyId });
    expectAuthRequired(await t.call('createOrganization', { email: 'a@b.co', name: 'N' }, credential));
    // Revoking again is idempotent: the credential stays revoked.
    expect((await admin('adminRevokePlatformCredential', { keyId })).json()).toEqual({ ok: true, keyId });
    expectError(
      await admin('adminRevokePlatformCredential', { keyId: 'unknownKeyId1234' }),
      404,
      'CREDENTIAL_NOT_FOUND',
    );
    // Only platform credentials: a personal token's key id is not found here.
    const u = await seedUser(t.deps);
    const pk = await issuePersonalToken(t.deps, u.user.id, 'x');
    expectError(
      await admin('adminRevokePlatformCredential', { keyId: pk.row.keyId }),
      404,
      'CREDENTIAL_NOT_FOUND',
    );
    expect((await t.call('whoamiForCli', {}, pk.token)).statusCode).toBe(200);
  });
});
