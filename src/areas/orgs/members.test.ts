import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { seedMember, seedOrg, seedUser } from '../../../test/seed.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

describe('members', () => {
  it('lists for any member; invites, changes roles and removes for managers only', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const member = await seedMember(t.deps, org.id, 'member');
    const outsider = await seedUser(t.deps);

    const list = await t.call('listMembersForCli', { orgSlug: org.slug }, member.token);
    expect(list.statusCode).toBe(200);
    expect(
      list
        .json()
        .map((m: { role: string }) => m.role)
        .sort(),
    ).toEqual(['member', 'owner']);
    const hidden = await t.call('listMembersForCli', { orgSlug: org.slug }, outsider.token);
    expect(hidden.json().error.code).toBe('ORG_NOT_FOUND');

    const email = `${uniq('new')}@example.com`;
    const denied = await t.call(
      'inviteMemberForCli',
      { orgSlug: org.slug, email, role: 'member' },
      member.token,
    );
    expect(denied.statusCode).toBe(403);
    const inv = await t.call('inviteMemberForCli', { orgSlug: org.slug, email, role: 'admin' }, owner.token);
    expect(inv.statusCode).toBe(200);
    expect(inv.json()).toMatchObject({ email, role: 'admin', alreadyMember: false });
    expect(inv.json().inviteUrl).toMatch(/\/set-password#token=/);
    const invitedId = inv.json().userId as string;

    const again = await t.call(
      'inviteMemberForCli',
      { orgSlug: org.slug, email, role: 'member' },
      owner.token,
    );
    expect(again.json()).toMatchObject({ alreadyMember: true, role: 'admin' });

    const role = await t.call(
      'setMemberRoleForCli',
      { orgSlug: org.slug, userId: member.user.id, role: 'admin' },
      owner.token,
    );
    expect(role.json()).toEqual({ ok: true, userId: member.user.id, role: 'admin' });
    // An admin cannot touch owners or grant the owner role.
    const grab = await t.call(
      'setMemberRoleForCli',
      { orgSlug: org.slug, userId: member.user.id, role: 'owner' },
      member.token,
    );
    expect(grab.statusCode).toBe(403);
    const kick = await t.call(
      'removeMemberForCli',
      { orgSlug: org.slug, userId: owner.user.id },
      member.token,
    );
    expect(kick.statusCode).toBe(403);
    const rm = await t.call('removeMemberForCli', { orgSlug: org.slug, userId: invitedId }, member.token);
    expect(rm.json()).toEqual({ ok: true, userId: invitedId });
    const gone = await t.call('removeMemberForCli', { orgSlug: org.slug, userId: invitedId }, owner.token);
    expect(gone.json().error.code).toBe('MEMBER_NOT_FOUND');
  });

  it("never hands out a password link for someone else's pending account", async () => {
    const a = await seedOrg(t.deps);
    const b = await seedOrg(t.deps);
    // b's owner was created like a createOrganization customer: no password yet.
    const victim = b.owner.user.email;
    const inv = await t.call(
      'inviteMemberForCli',
      { orgSlug: a.org.slug, email: victim, role: 'member' },
      a.owner.token,
    );
    expect(inv.statusCode).toBe(200);
    expect(inv.json().inviteUrl).toBeNull();
    // Someone new only to this organization gets one, also when invited again.
    const email = `${uniq('fresh')}@example.com`;
    await t.call('inviteMemberForCli', { orgSlug: a.org.slug, email, role: 'member' }, a.owner.token);
    const again = await t.call(
      'inviteMemberForCli',
      { orgSlug: a.org.slug, email, role: 'member' },
      a.owner.token,
    );
    expect(again.json().inviteUrl).toMatch(/set-password/);
  });

  it('keeps the last owner', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const demote = await t.call(
      'setMemberRoleForCli',
      { orgSlug: org.slug, userId: owner.user.id, role: 'admin' },
      owner.token,
    );
    expect(demote.statusCode).toBe(409);
    expect(demote.json().error.code).toBe('LAST_OWNER');
    const leave = await t.call(
      'removeMemberForCli',
      { orgSlug: org.slug, userId: owner.user.id },
      owner.token,
    );
    expect(leave.json().error.code).toBe('LAST_OWNER');
    const second = await seedMember(t.deps, org.id, 'owner');
    const ok = await t.call(
      'setMemberRoleForCli',
      { orgSlug: org.slug, userId: owner.user.id, role: 'member' },
      second.token,
    );
    expect(ok.statusCode).toBe(200);
    const bad = await t.call(
      'setMemberRoleForCli',
      { orgSlug: org.slug, userId: 'x', role: 'admin' },
      owner.token,
    );
    expect(bad.statusCode).toBe(400);
  });

  it('creates an organization owned by the caller', async () => {
    const u = await seedUser(t.deps);
    const slug = uniq('org');
    const made = await t.call('createOrgForCli', { slug, name: 'Mine' }, u.token);
    expect(made.json()).toMatchObject({ slug, name: 'Mine', role: 'owner' });
    const taken = await t.call('createOrgForCli', { slug, name: 'Again' }, u.token);
    expect(taken.json().error.code).toBe('SLUG_TAKEN');
  });
});

describe('personal tokens', () => {
  it('creates, lists, renames and revokes tokens by key id', async () => {
    const u = await seedUser(t.deps);
    const made = await t.call('createTokenForCli', {}, u.token);
    expect(made.statusCode).toBe(200);
    expect(made.json().label).toMatch(/^dashboard \d{4}-\d\d-\d\d \d\d:\d\d$/);
    const { token, keyId } = made.json();
    expect((await t.call('listMyOrgsForCli', {}, token)).statusCode).toBe(200);

    const list = await t.call('listTokensForCli', {}, u.token);
    expect(list.json()).toHaveLength(2);
    expect(JSON.stringify(list.json())).not.toContain(token.split('.')[2]);
    expect(list.json().find((x: { current: boolean }) => x.current).label).toBe('test token');

    const renamed = await t.call('updateTokenLabelForCli', { keyId, label: 'laptop' }, u.token);
    expect(renamed.json()).toEqual({ ok: true, keyId, label: 'laptop' });
    const other = await seedUser(t.deps);
    const foreign = await t.call('revokeTokenByIdForCli', { keyId }, other.token);
    expect(foreign.json().error.code).toBe('CREDENTIAL_NOT_FOUND');
    const revoked = await t.call('revokeTokenByIdForCli', { keyId }, u.token);
    expect(revoked.json()).toEqual({ ok: true, keyId });
    expect((await t.call('listMyOrgsForCli', {}, token)).statusCode).toBe(401);
  });
});
