import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { expectError } from '../../../test/security.ts';
import { seedMember, seedOrg, seedPlatform, seedUser } from '../../../test/seed.ts';
import { issuePersonalToken } from '../identity/tokens.ts';
import { findUserByEmail } from '../identity/users.ts';
import { addMember, createOrg } from './orgs.ts';

let t: TestApp;
let plat: string;
beforeAll(async () => {
  t = await testApp();
  plat = (await seedPlatform(t.deps, ['org.create'])).token;
});
afterAll(async () => {
  await t?.close();
});

describe('listMyOrgsForCli', () => {
  it("lists the caller's organizations sorted by slug with the caller's role", async () => {
    const me = await seedUser(t.deps);
    const stem = uniq('s');
    const b = await createOrg(t.deps, { slug: `${stem}-b`, name: 'B', ownerUserId: me.user.id });
    const other = await seedOrg(t.deps);
    await addMember(t.deps, other.org.id, me.user.id, 'member');
    const a = await seedOrg(t.deps);
    await addMember(t.deps, a.org.id, me.user.id, 'admin');
    await seedOrg(t.deps); // not mine
    const res = await t.call('listMyOrgsForCli', {}, me.token);
    expect(res.statusCode).toBe(200);
    const expected = [
      { id: b.id, slug: b.slug, name: 'B', role: 'owner' },
      { id: other.org.id, slug: other.org.slug, name: 'Test Org', role: 'member' },
      { id: a.org.id, slug: a.org.slug, name: 'Test Org', role: 'admin' },
    ].sort((x, y) => (x.slug < y.slug ? -1 : 1));
    expect(res.json()).toEqual(expected);
  });

  it('is empty for a user without organizations', async () => {
    const me = await seedUser(t.deps);
    expect((await t.call('listMyOrgsForCli', {}, me.token)).json()).toEqual([]);
  });
});

describe('createOrganization', () => {
  it('creates the organization owned by the customer (created if new); the caller gets no access', async () => {
    const email = `${uniq('cust')}@Example.com`;
    const slug = uniq('cust');
    const res = await t.call('createOrganization', { email, name: 'Customer Co', slug }, plat);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const owner = await findUserByEmail(t.deps, email);
    expect(body).toEqual({
      id: expect.any(String),
      slug,
      name: 'Customer Co',
      owner: { id: owner!.id, email: email.toLowerCase() },
    });
    const { token } = await issuePersonalToken(t.deps, owner!.id, 'customer');
    expect((await t.call('listMyOrgsForCli', {}, token)).json()).toEqual([
      { id: body.id, slug, name: 'Customer Co', role: 'owner' },
    ]);
    // The platform credential has no user: it cannot read what it created.
    expectError(await t.call('listMyOrgsForCli', {}, plat), 403, 'FORBIDDEN');
    const { rows } = await t.deps.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM memberships WHERE org_id = $1',
      [body.id],
    );
    expect(rows[0]!.n).toBe(1);
  });

  it('reuses an existing user by e-mail, case-insensitively', async () => {
    const existing = await seedUser(t.deps);
    const res = await t.call(
      'createOrganization',
      { email: existing.user.email.toUpperCase(), name: 'Second' },
      plat,
    );
    expect(res.json().owner).toEqual({ id: existing.user.id, email: existing.user.email });
  });

  it('derives a valid slug from the name when none is given', async () => {
    const name = `Ünïcode & Sons ${uniq('x')}`;
    const res = await t.call('createOrganization', { email: `${uniq('u')}@example.com`, name }, plat);
    expect(res.statusCode).toBe(200);
    expect(res.json().slug).toMatch(/^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/);
    const again = await t.call('createOrganization', { email: `${uniq('u')}@example.com`, name }, plat);
    expect(again.statusCode).toBe(200);
    expect(again.json().slug).not.toBe(res.json().slug);
    const tiny = await t.call('createOrganization', { email: `${uniq('u')}@example.com`, name: '!' }, plat);
    expect(tiny.json().slug).toMatch(/^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/);
  });

  it('refuses bad slugs (INVALID_SLUG) and taken ones (SLUG_TAKEN); slugs are global', async () => {
    const email = `${uniq('u')}@example.com`;
    for (const slug of [
      'ab',
      'x'.repeat(41),
      'Upper',
      'has_underscore',
      '-lead',
      'trail-',
      'dou--ble',
      'admin',
      'é-org',
    ]) {
      expectError(await t.call('createOrganization', { email, name: 'N', slug }, plat), 400, 'INVALID_SLUG');
    }
    expect(
      (await t.call('createOrganization', { email, name: 'N', slug: 'x'.repeat(40) }, plat)).statusCode,
    ).toBe(200);
    const { org } = await seedOrg(t.deps);
    expectError(
      await t.call('createOrganization', { email, name: 'N', slug: org.slug }, plat),
      409,
      'SLUG_TAKEN',
    );
  });

  it('validates the e-mail and name', async () => {
    expectError(
      await t.call('createOrganization', { email: 'not-an-email', name: 'N' }, plat),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await t.call('createOrganization', { email: 'a@b.co', name: '  ' }, plat),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await t.call('createOrganization', { name: 'N' }, plat), 400, 'VALIDATION_ERROR');
  });

  it('needs the org.create scope', async () => {
    const other = await seedPlatform(t.deps, ['project.create', 'deploy', 'model.resolve']);
    expectError(
      await t.call('createOrganization', { email: 'a@b.co', name: 'N' }, other.token),
      403,
      'PLATFORM_SCOPE_DENIED',
    );
    const member = await seedMember(t.deps, (await seedOrg(t.deps)).org.id, 'owner');
    expectError(
      await t.call('createOrganization', { email: 'a@b.co', name: 'N' }, member.token),
      403,
      'FORBIDDEN',
    );
  });
});
